-- A real headless browser for the specs of wlrun report's page (tests/e2e/report_spec.lua):
-- Debian's chromium-headless-shell (or chromium in its headless mode, or WLRUN_CHROMIUM).
--   B.path                                  the browser, or nil where there is none
--   B.dump(file, fragment)                  the DOM after the page's script ran, and the
--                                           page's console lines (errors, blocked loads...)
--   B.screenshot(file, png, "W,H")          a screenshot of the window
--   B.session(file[, "W,H"]) -> s           the page under the DevTools protocol (through
--                                           --remote-debugging-pipe): s:eval(js) -> value,
--                                           s:click(selector) with the mouse, s:key(selector,
--                                           key) from the keyboard, s:close()
-- Every run has its own profile directory and a time limit; --no-sandbox lets it run as root.
local h = require "helper"
local json = require "wlrun.json"

local B = {}

local q = h.quote

local function found(name)
  local p = io.popen("command -v " .. q(name) .. " 2>/dev/null")
  local path = p:read("l")
  p:close()
  return path
end

local headless = ""
do
  local env = os.getenv("WLRUN_CHROMIUM")
  if env and env ~= "" then
    B.path = found(env)
    headless = env:find("headless%-shell") and "" or "--headless "
  else
    B.path = found("chromium-headless-shell")
    if not B.path then
      B.path = found("chromium")
      headless = "--headless "
    end
  end
end

local function command(profile, args)
  return (
    "timeout 90 %s %s--no-sandbox --disable-gpu --no-first-run --user-data-dir=%s "
    .. "--hide-scrollbars %s"):format(
    q(B.path), headless, q(profile), args)
end

-- runs the browser once on a file; returns its stdout and the console lines of its stderr
local function once(file, args, fragment)
  local profile = h.tmpdir()
  local out, err = os.tmpname(), os.tmpname()
  local cmd = command(profile, ("--enable-logging=stderr --v=0 %s %s >%s 2>%s"):format(args,
    q("file://" .. file .. (fragment or "")), q(out), q(err)))
  local ok = os.execute(cmd)
  local stdout, log = h.read(out), h.read(err)
  os.remove(out)
  os.remove(err)
  -- the browser's helper processes may still write into the profile as it goes: what is left then
  -- goes with helper.tmpdir's at the end of the run
  os.execute("rm -rf " .. q(profile) .. " 2>/dev/null")
  assert(ok == true, "the browser failed: " .. cmd .. "\n" .. log)
  local console = {}
  for line in log:gmatch("[^\n]+") do
    if line:find("CONSOLE", 1, true) or line:find("Uncaught", 1, true) then
      console[#console + 1] = line end
  end
  return stdout, console
end

function B.dump(file, fragment) return once(file, "--window-size=1280,2000 --dump-dom",
  fragment) end

function B.screenshot(file, png, size)
  local _, console = once(file, ("--window-size=%s --screenshot=%s"):format(size, q(png)))
  return console
end

local Session = {}
Session.__index = Session

-- one message of the protocol: JSON ended by a NUL byte
local function read_message(r)
  local buf = {}
  while true do
    local c = r:read(1)
    assert(c, "the browser closed its pipe")
    if c == "\0" then return json.decode(table.concat(buf)) end
    buf[#buf + 1] = c
  end
end

-- sends a command and returns its result (events before it are passed over)
function Session:send(method, params, session)
  self.id = self.id + 1
  local msg = { id = self.id, method = method, params = params or json.object {},
    sessionId = session }
  assert(self.w:write(json.encode(msg) .. "\0"))
  self.w:flush()
  while true do
    local m = read_message(self.r)
    if m.id == self.id then
      assert(not m.error, method .. ": " .. json.encode(m.error or {}))
      return m.result
    end
  end
end

function Session:eval(js)
  local r = self:send("Runtime.evaluate", { expression = js, returnByValue = true }, self.session)
  assert(not r.exceptionDetails, "the page's JavaScript failed: "
    .. json.encode(r.exceptionDetails or {}))
  return r.result.value
end

-- a mouse click at the middle of the element
function Session:click(selector)
  local rect = json.decode(
    self:eval(("JSON.stringify(document.querySelector(%s).getBoundingClientRect())"):format(
    json.encode(selector))))
  local x, y = rect.x + rect.width / 2, rect.y + rect.height / 2
  for _, t in ipairs { "mousePressed", "mouseReleased" } do
    self:send("Input.dispatchMouseEvent", { type = t, x = x, y = y, button = "left",
      clickCount = 1 }, self.session)
  end
end

-- a key typed with the element focused
function Session:key(selector, key)
  self:eval(("document.querySelector(%s).focus()"):format(json.encode(selector)))
  for _, t in ipairs { "keyDown", "keyUp" } do
    self:send("Input.dispatchKeyEvent", { type = t, key = key, code = key,
      windowsVirtualKeyCode = key == "Enter" and 13 or 0 },
      self.session)
  end
end

function Session:close()
  pcall(self.send, self, "Browser.close")
  self.w:close()
  self.r:close()
  os.execute("rm -rf " .. q(self.dir) .. " 2>/dev/null") -- as in once()
end

function B.session(file, size)
  local dir = h.tmpdir()
  assert(os.execute(("mkfifo %s %s"):format(q(dir .. "/in"), q(dir .. "/out"))))
  assert(os.execute(command(dir .. "/profile", (
    "--window-size=%s --remote-debugging-pipe 3<%s 4>%s 2>/dev/null &"):format(
    size or "1280,2000", q(dir .. "/in"), q(dir .. "/out")))))
  local s = setmetatable({ id = 0, dir = dir }, Session)
  s.w = assert(io.open(dir .. "/in", "wb"))
  s.r = assert(io.open(dir .. "/out", "rb"))
  local target = s:send("Target.createTarget", { url = "file://" .. file }).targetId
  s.session = s:send("Target.attachToTarget", { targetId = target, flatten = true }).sessionId
  for _ = 1, 100 do -- loaded: the file's document, complete (about:blank comes first)
    if s:eval("location.protocol + document.readyState") == "file:complete" then return s end
    os.execute("sleep 0.1")
  end
  s:close()
  error("the page did not load in 10 s: " .. file)
end

return B

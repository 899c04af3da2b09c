-- SHA-256 (FIPS 180-4) of a string, and its base64: the hashes that the page's Content Security
-- Policy allows its own inline script and style by, so that a browser runs nothing else, even
-- markup that escaping had missed. Pure Lua 5.4 (64-bit integers, masked to 32 bits).
local M = {}

local K = {
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
  0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
  0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
  0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
  0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
  0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
  0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
  0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
}

local M32 = 0xffffffff

local function rotr(x, n) return ((x >> n) | (x << (32 - n))) & M32 end

-- the 32 bytes of the digest
function M.digest(msg)
  local h = { 0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab,
    0x5be0cd19 }
  local len = #msg
  msg = msg .. "\128" .. string.rep("\0", (55 - len) % 64) .. string.pack(">I8", 8 * len)
  local w = {}
  for chunk = 1, #msg, 64 do
    for i = 1, 16 do w[i] = string.unpack(">I4", msg, chunk + 4 * (i - 1)) end
    for i = 17, 64 do
      local a, b = w[i - 15], w[i - 2]
      local s0 = rotr(a, 7) ~ rotr(a, 18) ~ (a >> 3)
      local s1 = rotr(b, 17) ~ rotr(b, 19) ~ (b >> 10)
      w[i] = (w[i - 16] + s0 + w[i - 7] + s1) & M32
    end
    local a, b, c, d, e, f, g, hh = table.unpack(h)
    for i = 1, 64 do
      local t1 = (hh + (rotr(e, 6) ~ rotr(e, 11) ~ rotr(e, 25)) + (
        (e & f) ~ (~e & g)) + K[i] + w[i]) & M32
      local t2 = ((rotr(a, 2) ~ rotr(a, 13) ~ rotr(a, 22)) + ((a & b) ~ (a & c) ~ (b & c))) & M32
      a, b, c, d, e, f, g, hh = (t1 + t2) & M32, a, b, c, (d + t1) & M32, e, f, g
    end
    for i, v in ipairs { a, b, c, d, e, f, g, hh } do h[i] = (h[i] + v) & M32 end
  end
  return string.pack(">I4I4I4I4I4I4I4I4", table.unpack(h))
end

function M.hex(msg) return (M.digest(msg):gsub(".",
  function(c) return ("%02x"):format(c:byte()) end)) end

local B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"

local function b64(n) return B64:sub(n + 1, n + 1) end

function M.base64(bytes)
  local out = {}
  for i = 1, #bytes, 3 do
    local a, b, c = bytes:byte(i, i + 2)
    local n = (a << 16) | ((b or 0) << 8) | (c or 0)
    out[#out + 1] = b64(n >> 18 & 63) .. b64(n >> 12 & 63) .. (b and b64(n >> 6 & 63) or "=")
      .. (c and b64(n & 63) or "=")
  end
  return table.concat(out)
end

-- "sha256-<base64>" of a text, as a Content Security Policy names it
function M.csp_source(text) return "'sha256-" .. M.base64(M.digest(text)) .. "'" end

return M

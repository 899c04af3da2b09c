-- End-to-end: `wlrun merge` on the shard files of tests/fixtures/merge/ (made by its make.lua
-- from tests/fixtures/results/sample.lua, split as --shard K/2 splits it): complementary
-- shards, an overlap, missing configurations, mismatched files, errors and their exit codes;
-- the merged document with every printer and with compare (docs/cluster.md).
local h = require "helper"
local json = require "wlrun.json"

local F = h.source_dir .. "/tests/fixtures/merge/"
local R = h.source_dir .. "/tests/fixtures/report/"
local q = h.quote

local function fx(...)
  local list = {}
  for i, name in ipairs { ... } do list[i] = q(F .. name) end
  return table.concat(list, " ")
end

local function merge(args) return h.run("merge " .. args) end

local function json_of(text)
  local doc, err = json.decode(text)
  assert(doc, err)
  return doc
end

local function indices(doc)
  local list = {}
  for _, c in ipairs(doc.configurations) do list[#list + 1] = c.index end
  return list
end

describe("wlrun merge", function()
  local dir
  before_each(function() dir = h.tmpdir() end)
  after_each(function() os.execute("rm -rf " .. q(dir)) end)

  it("merges two complementary shards into one complete document", function()
    local out = dir .. "/all.json"
    local r = merge(fx("shard_1.json", "shard_2.json") .. " -o " .. q(out))
    assert.equal(0, r.code, r.stderr)
    assert.equal("", r.stdout) -- -o without --format: nothing on standard output
    assert.equal("wlrun merge: 2 files: 4 of 4 configurations, complete\n", r.stderr)
    local doc = json_of(h.read(out))
    assert.equal("wlrun-results", doc.schema)
    assert.equal(1, doc.version)
    assert.is_true(doc.complete)
    assert.same({ 1, 2, 3, 4 }, indices(doc))
    assert.same({ 1, 2, 1, 2 }, { doc.configurations[1].from, doc.configurations[2].from,
      doc.configurations[3].from,
                                  doc.configurations[4].from })
    assert.equal(4, doc.scenario.total_configurations)
    assert.is_nil(doc.shard)
    assert.same({}, doc.missing)
    assert.equal("2026-11-29T22:31:07Z", doc.started) -- the earliest start
    assert.equal("2026-11-29T22:31:52Z", doc.finished) -- the latest end
    assert.equal(2, #doc.shards)
    local s1, s2 = doc.shards[1], doc.shards[2]
    assert.equal(F .. "shard_1.json", s1.file)
    assert.same({ k = 1, n = 2, source = "SLURM_ARRAY_TASK_ID" }, s1.shard)
    assert.same({ 0, 1 }, { s1.device.index, s2.device.index })
    assert.equal("NVIDIA H200", s2.device.name)
    assert.same({ "2026-11-29T22:31:09Z", "2026-11-29T22:31:52Z", true, 2 },
      { s2.started, s2.finished, s2.complete,
                                                                               s2.configurations })
    -- the measurements are those of the shards, untouched
    local sample = json_of(h.read(h.source_dir .. "/tests/fixtures/results/sample.json"))
    for i = 1, 4 do
      assert.same(sample.configurations[i].samples, doc.configurations[i].samples)
      assert.same(sample.configurations[i].params, doc.configurations[i].params)
    end
    -- the order of the files does not matter
    local r2 = merge(fx("shard_2.json", "shard_1.json") .. " --format json -q")
    assert.equal(0, r2.code, r2.stderr)
    assert.same({ 1, 2, 3, 4 }, indices(json_of(r2.stdout)))
  end)

  it("keeps each shard's own wall account with its shard, not as the merged document's", function()
    local paths = {}
    for k = 1, 2 do
      local doc = json_of(h.read(F .. ("shard_%d.json"):format(k)))
      doc.wall = { start = 0.02 * k, device = 0.2, configurations = k, total = 1 + k }
      paths[k] = ("%s/s%d.json"):format(dir, k)
      h.write(paths[k], json.encode(doc))
    end
    local r = merge(q(paths[1]) .. " " .. q(paths[2]) .. " --format json -q")
    assert.equal(0, r.code, r.stderr)
    local doc = json_of(r.stdout)
    assert.is_nil(doc.wall)
    assert.same({ start = 0.02, device = 0.2, configurations = 1, total = 2 }, doc.shards[1].wall)
    assert.same({ start = 0.04, device = 0.2, configurations = 2, total = 3 }, doc.shards[2].wall)
  end)

  it("renders with every printer as the unsharded run does", function()
    local args = fx("shard_1.json", "shard_2.json") .. " -q --format "
    -- the same table, CSV and plain text as the run that was split (golden files of the printers)
    assert.equal(h.read(R .. "table.txt"), merge(args .. "table").stdout)
    assert.equal(h.read(R .. "sample.csv"), merge(args .. "csv").stdout)
    assert.equal(h.read(R .. "plain.txt"), merge(args .. "plain").stdout)
    -- Markdown too, but for the end: the second shard finished later
    local md = merge(args .. "markdown").stdout
    assert.equal((h.read(R .. "sample.md"):gsub("finished: 2026%-11%-29T22:31:40Z",
      "finished: 2026-11-29T22:31:52Z")), md)
    -- no -o: the table on standard output
    local r = merge(fx("shard_1.json", "shard_2.json"))
    assert.equal(h.read(R .. "table.txt"), r.stdout)
    -- -o: the format from the extension, several at once
    r = merge(fx("shard_1.json", "shard_2.json") .. " -q -o " .. q(dir .. "/m.csv") .. " -o "
      .. q(dir .. "/m.md")
      .. " -o " .. q(dir .. "/m.txt") .. " --output=" .. q(dir .. "/m.json"))
    assert.equal(0, r.code, r.stderr)
    assert.equal(h.read(R .. "sample.csv"), h.read(dir .. "/m.csv"))
    assert.equal(md, h.read(dir .. "/m.md"))
    assert.equal(h.read(R .. "plain.txt"), h.read(dir .. "/m.txt"))
    assert.equal("wlrun-results", json_of(h.read(dir .. "/m.json")).schema)
  end)

  it("gives a document that wlrun compare finds the same as itself", function()
    local out = dir .. "/merged.json"
    assert.equal(0, merge(fx("shard_1.json", "shard_2.json") .. " -o " .. q(out)).code)
    local r = h.run("compare " .. q(out) .. " " .. q(out))
    assert.equal(0, r.code, r.stderr)
    assert.equal("", r.stderr)
    assert.matches("\nVerdicts: 2 same\n", r.stdout)
    assert.matches("Geometric mean of NEW/BASE over 2 configurations: 1%.000 ", r.stdout)
    -- and the same as the run that was split
    r = h.run("compare " .. q(h.source_dir .. "/tests/fixtures/results/sample.json") .. " "
      .. q(out))
    assert.equal(0, r.code, r.stderr)
    assert.matches("\nVerdicts: 2 same\n", r.stdout)
    -- a merged document merges again
    r = merge(q(out) .. " -q --format json")
    assert.equal(0, r.code, r.stderr)
    assert.same({ 1, 2, 3, 4 }, indices(json_of(r.stdout)))
  end)

  it("keeps a duplicated configuration once, the first file's, with a warning naming the files",
    function()
    local r = merge(fx("shard_1.json", "overlap.json") .. " --format json")
    assert.equal(0, r.code, r.stderr)
    assert.equal(
      ("wlrun merge: warning: configuration #3 (variant=tiled, M=1024, N=1024) is in "
      .. "'%sshard_1.json' and '%soverlap.json': kept the one in '%sshard_1.json'\n")
      :format(F, F, F) .. "wlrun merge: 2 files: 4 of 4 configurations, 1 duplicated, complete\n",
        r.stderr)
    local doc = json_of(r.stdout)
    assert.same({ 1, 2, 3, 4 }, indices(doc))
    assert.equal(1, doc.configurations[3].from)
    assert.equal(2, doc.shards[2].configurations) -- overlap.json's #2 and #4 were used, not its #3
    assert.is_true(doc.complete)
    -- the same file twice: every configuration duplicated
    r = merge(fx("shard_1.json", "shard_1.json"))
    assert.equal(0, r.code)
    assert.matches("2 files: 2 of 4 configurations, 2 duplicated, INCOMPLETE: missing #2, #4",
      r.stderr)
  end)

  it("lists the missing configurations and shards; the document is incomplete", function()
    local r = merge(fx("shard_1.json") .. " --format json")
    assert.equal(0, r.code, r.stderr)
    assert.equal(
      "wlrun merge: 1 file: 2 of 4 configurations, INCOMPLETE: missing #2, #4; no file of "
      .. "shard 2/2\n", r.stderr)
    local doc = json_of(r.stdout)
    assert.is_false(doc.complete)
    assert.same({ 2, 4 }, doc.missing)
    assert.matches("%(incomplete: interrupted or still running%)",
      merge(fx("shard_1.json") .. " -q").stdout)
    -- an interrupted shard: what it measured is kept, the rest is missing
    r = merge(fx("shard_1.json", "partial.json") .. " --format json")
    assert.equal(0, r.code, r.stderr)
    assert.matches("warning: '" .. F:gsub("%p", "%%%0")
      .. "partial%.json' is incomplete %(its run was interrupted or is still going on%)\n",
      r.stderr)
    assert.matches(
      "2 files: 3 of 4 configurations, INCOMPLETE: missing #4; some files are incomplete\n$",
      r.stderr)
    doc = json_of(r.stdout)
    assert.is_false(doc.complete)
    assert.same({ 4 }, doc.missing)
    assert.same({ 1, 2, 3 }, indices(doc))
  end)

  it("says the total is unknown when the files do not carry it", function()
    local r = merge(fx("legacy_a.json", "legacy_b.json") .. " --format json")
    assert.equal(0, r.code, r.stderr)
    assert.equal(
      "wlrun merge: 2 files: 4 configurations, complete as far as the files tell (they do not "
      .. "say how many configurations the sweep has)\n",
      r.stderr)
    local doc = json_of(r.stdout)
    assert.same({ 1, 2, 3, 4 }, indices(doc))
    assert.is_nil(doc.missing)
    assert.is_nil(doc.scenario.total_configurations)
    r = merge(fx("legacy_a.json"))
    assert.matches("1 file: 2 configurations, complete as far as the files tell", r.stderr)
  end)

  it("warns about different devices but merges", function()
    local r = merge(fx("shard_1.json", "other_device.json") .. " --format json")
    assert.equal(0, r.code, r.stderr)
    assert.matches(
      "wlrun merge: warning: '.-shard_1%.json' and '.-other_device%.json' come from different "
      .. "devices %('NVIDIA H200' and 'NVIDIA A100%-SXM4%-80GB'%): the merged results mix them\n",
      r.stderr)
    local doc = json_of(r.stdout)
    assert.is_true(doc.complete)
    assert.equal("NVIDIA A100-SXM4-80GB", doc.shards[2].device.name)
    assert.equal("NVIDIA H200", doc.device.name) -- the first file's
    assert.equal("", merge(fx("shard_1.json", "other_device.json") .. " -q -o "
      .. q(dir .. "/x.json")).stderr)
  end)

  it("refuses files of different scenarios, scripts, settings or spaces: exit 2, naming both",
    function()
    local cases = {
      { "other_scenario.json", "are runs of different scenarios %('gemm_sweep' and 'softmax'%)" },
      { "other_hash.json",
        "were made by different versions of the scenario's script %(hashes "
        .. "'fnv1a128:9f0c3b7a51e2d4c8a0b6e1f27d3c9a45' and 'fnv1a128:0+1'%)" },
      { "other_settings.json",
        "were run with different settings %(run%.flush_l2 false vs true, run%.iters 20 vs 50%)" },
      { "other_space.json",
        "are of different parameter spaces %(4 and 6 configurations: other %-p or %-%-filter%?%)" },
    }
    for _, c in ipairs(cases) do
      local out = dir .. "/never.json"
      local r = merge(fx("shard_1.json", c[1]) .. " -o " .. q(out))
      assert.equal(2, r.code, c[1])
      assert.equal("", r.stdout)
      local both = ("^wlrun: merge: '%sshard_1%%.json' and '%s%s' "):format(F:gsub("%p", "%%%0"),
        F:gsub("%p", "%%%0"),
        c[1]:gsub("%p", "%%%0"))
      assert.matches(both .. c[2] .. ": only the shards of one sweep merge\n$", r.stderr)
      assert.is_nil(io.open(out))
    end
    -- output settings (format, quiet, progress) may differ: other_settings.json's output.format
    -- is json, and the message does not name it
    assert.not_matches("output", merge(fx("shard_1.json", "other_settings.json")).stderr)
  end)

  it("refuses one index with other parameters in two shards: exit 2", function()
    local doc = json_of(h.read(F .. "shard_2.json"))
    doc.configurations[1].params.M = 2048 -- #2 is naive 4096 in the sweep
    h.write(dir .. "/bad.json", require("wlrun.report").render(doc, "json"))
    local r = merge(fx("overlap.json") .. " " .. q(dir .. "/bad.json"))
    assert.equal(2, r.code)
    assert.matches(
      "configuration #2 is %(variant=naive, M=4096, N=4096%) in '.-overlap%.json' but "
      .. "%(variant=naive, M=2048, N=4096%) in '.-bad%.json': the files are shards of different "
      .. "parameter spaces", r.stderr)
  end)

  describe("errors", function()
    it("a missing or unreadable file: exit 9, naming it", function()
      local r = merge(fx("shard_1.json", "nope.json"))
      assert.equal(9, r.code)
      assert.equal("wlrun: merge: cannot read '" .. F .. "nope.json': No such file or directory\n",
        r.stderr)
      assert.equal("", r.stdout)
      r = merge(fx("shard_1.json") .. " " .. q(F))
      assert.equal(9, r.code)
      assert.matches("cannot read .*: it is a directory, not a file", r.stderr)
    end)

    it("not a results document or not JSON: exit 2", function()
      local r = merge(fx("shard_1.json", "not_results.json"))
      assert.equal(2, r.code)
      assert.matches(
        "not_results%.json' is not a wlrun%-results document %(its schema is 'wlrun%-compare'%)",
        r.stderr)
      h.write(dir .. "/cut.json", h.read(F .. "shard_1.json"):sub(1, 300))
      r = merge(fx("shard_1.json") .. " " .. q(dir .. "/cut.json"))
      assert.equal(2, r.code)
      assert.matches("cut%.json' is not valid JSON", r.stderr)
    end)

    it("bad command lines: exit 2", function()
      local cases = {
        { "", "expected results files to merge" },
        { fx("shard_1.json") .. " --frob", "unknown option '%-%-frob'" },
        { fx("shard_1.json") .. " --format html",
          "%-%-format: expected table, plain, csv, markdown, json, got 'html'" },
        { fx("shard_1.json") .. " -o out.pdf", "cannot tell the output format of 'out%.pdf'" },
        { fx("shard_1.json") .. " -o", "option %-o needs a value" },
      }
      for _, c in ipairs(cases) do
        local r = merge(c[1])
        assert.equal(2, r.code, c[1])
        assert.matches(c[2], r.stderr)
      end
    end)

    it("a file -o cannot write: exit 9", function()
      local r = merge(fx("shard_1.json", "shard_2.json") .. " -o /nonexistent/dir/all.json")
      assert.equal(9, r.code)
      assert.matches("cannot write '/nonexistent/dir/all%.json': No such file or directory",
        r.stderr)
    end)
  end)

  it("prints its help", function()
    local r = merge("--help")
    assert.equal(0, r.code)
    assert.matches("^Usage: wlrun merge A%.json B%.json %.%.%. %[%-o ALL%.json%] %[options%]\n",
      r.stdout)
  end)
end)

-- Runs after README's Neovim 0.7–0.9 snippet (loaded as the init.lua, as written): opens two reward files of
-- one workspace, switches between them, waits until the server has published diagnostics for both, and writes
-- how many rewardsmith clients run and which clients each buffer is attached to.
-- Environment: RS_FILES (JSON array of reward files), RS_OUT (result file).
local files = vim.fn.json_decode(os.getenv('RS_FILES'))
local out = os.getenv('RS_OUT')
local result = { log = {}, clients = 0, attached = {}, diagnosed = {} }

local ok, err = pcall(function()
  local buffers = {}
  for _, f in ipairs(files) do
    vim.cmd('edit ' .. vim.fn.fnameescape(f))
    table.insert(buffers, vim.api.nvim_get_current_buf())
  end
  -- A user going back and forth: each switch is a BufEnter.
  for _ = 1, 4 do vim.cmd('bnext') end
  local function diagnosed(buf) return #vim.diagnostic.get(buf) > 0 end
  local all = vim.wait(150000, function()
    for _, b in ipairs(buffers) do if not diagnosed(b) then return false end end
    return true
  end, 200)
  if not all then table.insert(result.log, 'not every buffer got diagnostics within 150 s') end
  for _, c in ipairs(vim.lsp.get_active_clients()) do
    if c.name == 'rewardsmith' then result.clients = result.clients + 1 end
  end
  for i, b in ipairs(buffers) do
    local ids = {}
    for id, _ in pairs(vim.lsp.buf_get_clients(b)) do table.insert(ids, id) end
    result.attached[i] = ids
    result.diagnosed[i] = diagnosed(b)
  end
  for _, c in ipairs(vim.lsp.get_active_clients()) do c.stop() end
end)
if not ok then table.insert(result.log, tostring(err)) end
local f = io.open(out, 'w')
f:write(vim.fn.json_encode(result))
f:close()
vim.cmd('qa!')

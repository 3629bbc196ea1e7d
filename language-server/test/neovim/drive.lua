-- Drives `rewardsmith lsp --stdio` from headless Neovim as a user's config would (Neovim 0.7's
-- vim.lsp.start_client; vim.lsp.start where it exists), and writes what the editor got to a JSON file:
-- the diagnostics, a hover, a completion list, and the reward file after applying a quick fix.
-- Environment: RS_LSP_CMD (JSON array: the server command), RS_FILE (reward file), RS_OUT (result file).
local cmd = vim.fn.json_decode(os.getenv('RS_LSP_CMD'))
local file = os.getenv('RS_FILE')
local out = os.getenv('RS_OUT')
local result = { version = tostring(vim.version().major) .. '.' .. tostring(vim.version().minor), diagnostics = {}, log = {} }

local function finish()
  local f = io.open(out, 'w')
  f:write(vim.fn.json_encode(result))
  f:close()
  vim.cmd('qa!')
end

local ok, err = pcall(function()
  vim.cmd('edit ' .. vim.fn.fnameescape(file))
  local bufnr = vim.api.nvim_get_current_buf()
  local published = nil
  local config = {
    name = 'rewardsmith',
    cmd = cmd,
    root_dir = vim.fn.fnamemodify(file, ':h'),
    handlers = {
      ['textDocument/publishDiagnostics'] = function(_, params)
        if params and #params.diagnostics > 0 then published = params.diagnostics end
      end,
    },
  }
  local client_id
  if vim.lsp.start then
    client_id = vim.lsp.start(config)
  else
    client_id = vim.lsp.start_client(config)
    vim.lsp.buf_attach_client(bufnr, client_id)
  end
  result.client = client_id ~= nil
  if not vim.wait(90000, function() return published ~= nil end, 100) then
    table.insert(result.log, 'no diagnostics within 90 s')
    return
  end
  result.diagnostics = published
  local client = vim.lsp.get_client_by_id(client_id)
  local uri = vim.uri_from_bufnr(bufnr)
  local line = tonumber(os.getenv('RS_LINE'))
  local hover = client.request_sync('textDocument/hover', { textDocument = { uri = uri }, position = { line = line, character = tonumber(os.getenv('RS_HOVER_CHAR')) } }, 20000, bufnr)
  result.hover = hover and hover.result or vim.NIL
  local completion = client.request_sync('textDocument/completion', { textDocument = { uri = uri }, position = { line = line, character = tonumber(os.getenv('RS_COMPLETE_CHAR')) } }, 20000, bufnr)
  local items = completion and completion.result or {}
  if items.items then items = items.items end
  result.completion = {}
  for _, item in ipairs(items) do table.insert(result.completion, item.label) end
  -- The quick fix a user picks from vim.lsp.buf.code_action(), applied the way Neovim applies it.
  local diagnostic = published[1]
  local actions = client.request_sync('textDocument/codeAction', { textDocument = { uri = uri }, range = diagnostic.range, context = { diagnostics = { diagnostic } } }, 20000, bufnr)
  actions = actions and actions.result or {}
  result.actions = {}
  for _, a in ipairs(actions) do table.insert(result.actions, a.title) end
  if actions[1] and actions[1].edit then
    vim.lsp.util.apply_workspace_edit(actions[1].edit, 'utf-16')
    vim.cmd('write')
    result.applied = actions[1].title
  end
  client.stop()
end)
if not ok then table.insert(result.log, tostring(err)) end
finish()

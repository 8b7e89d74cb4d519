-- Gantry's language server with nvim-lspconfig: put this in your config
-- (init.lua, or a file under lua/ that it requires). `gantry` must be on
-- PATH; otherwise set `cmd = { "/full/path/to/gantry", "lsp" }`.
local configs = require("lspconfig.configs")
local util = require("lspconfig.util")

if not configs.gantry then
  configs.gantry = {
    default_config = {
      cmd = { "gantry", "lsp" },
      filetypes = { "lua", "rhai", "toml" },
      root_dir = util.root_pattern("mod.toml", ".gantry", ".git"),
      single_file_support = true,
    },
    docs = {
      description = "Gantry: message keys of Lua and Rhai mods (gantry lsp).",
    },
  }
end

require("lspconfig").gantry.setup({
  on_attach = function(client, bufnr)
    -- Inlay hints show each value's parameter name at a send.
    if client.server_capabilities.inlayHintProvider and vim.lsp.inlay_hint then
      vim.lsp.inlay_hint.enable(true, { bufnr = bufnr })
    end
    -- Code lenses: "3 senders · 2 listeners" over each key.
    if client.server_capabilities.codeLensProvider then
      vim.lsp.codelens.refresh({ bufnr = bufnr })
      vim.api.nvim_create_autocmd({ "BufEnter", "InsertLeave" }, {
        buffer = bufnr,
        callback = function() vim.lsp.codelens.refresh({ bufnr = bufnr }) end,
      })
    end
  end,
})

-- A code lens runs `gantry.showReferences` with [uri, position, locations]:
-- show the locations in the quickfix list.
vim.lsp.commands["gantry.showReferences"] = function(command)
  local locations = command.arguments[3] or {}
  local items = vim.lsp.util.locations_to_items(locations, "utf-16")
  vim.fn.setqflist({}, " ", { title = "Gantry references", items = items })
  vim.cmd("copen")
end

-- Neovim knows no `rhai` filetype by default.
vim.filetype.add({ extension = { rhai = "rhai" } })

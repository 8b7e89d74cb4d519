-- Gantry's language server with Neovim's built-in client (0.10+), no
-- plugin: put this in init.lua. `gantry` must be on PATH; otherwise write
-- its full path in `cmd`.
vim.filetype.add({ extension = { rhai = "rhai" } })

vim.api.nvim_create_autocmd("FileType", {
  pattern = { "lua", "rhai", "toml" },
  callback = function(args)
    local name = vim.api.nvim_buf_get_name(args.buf)
    -- `toml` only for a mod's manifest.
    if vim.bo[args.buf].filetype == "toml" and vim.fs.basename(name) ~= "mod.toml" then
      return
    end
    local root = vim.fs.root(args.buf, { "mod.toml", ".gantry", ".git" })
    vim.lsp.start({
      name = "gantry",
      cmd = { "gantry", "lsp" },
      root_dir = root or vim.fs.dirname(name),
    })
  end,
})

vim.api.nvim_create_autocmd("LspAttach", {
  callback = function(args)
    local client = vim.lsp.get_client_by_id(args.data.client_id)
    if not client or client.name ~= "gantry" then
      return
    end
    if client.server_capabilities.inlayHintProvider and vim.lsp.inlay_hint then
      vim.lsp.inlay_hint.enable(true, { bufnr = args.buf })
    end
    if client.server_capabilities.codeLensProvider then
      vim.lsp.codelens.refresh({ bufnr = args.buf })
    end
  end,
})

-- A code lens runs `gantry.showReferences` with [uri, position, locations].
vim.lsp.commands["gantry.showReferences"] = function(command)
  local locations = command.arguments[3] or {}
  local items = vim.lsp.util.locations_to_items(locations, "utf-16")
  vim.fn.setqflist({}, " ", { title = "Gantry references", items = items })
  vim.cmd("copen")
end

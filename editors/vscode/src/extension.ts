// Starts `gantry lsp` for Lua and Rhai scripts and `mod.toml`, and turns
// the server's code lens command (`gantry.showReferences`) into VS Code's
// references view.

import * as vscode from "vscode";
import {
  LanguageClient,
  LanguageClientOptions,
  ServerOptions,
  TransportKind,
} from "vscode-languageclient/node";

let client: LanguageClient | undefined;

/** The binary to start: the `gantry.path` setting, else `gantry` on PATH. */
function serverPath(): string {
  const configured = vscode.workspace.getConfiguration("gantry").get<string>("path");
  return configured && configured.trim() !== "" ? configured.trim() : "gantry";
}

function createClient(): LanguageClient {
  const command = serverPath();
  const serverOptions: ServerOptions = {
    run: { command, args: ["lsp"], transport: TransportKind.stdio },
    debug: { command, args: ["lsp"], transport: TransportKind.stdio },
  };
  const clientOptions: LanguageClientOptions = {
    documentSelector: [
      { scheme: "file", language: "lua" },
      { scheme: "file", language: "rhai" },
      { scheme: "file", pattern: "**/*.rhai" },
      { scheme: "file", pattern: "**/mod.toml" },
    ],
    synchronize: {
      fileEvents: [
        vscode.workspace.createFileSystemWatcher("**/.gantry/signatures.json"),
        vscode.workspace.createFileSystemWatcher("**/mod.toml"),
      ],
    },
  };
  return new LanguageClient("gantry", "Gantry", serverOptions, clientOptions);
}

/** `[uri, position, locations]` as the server sends them, as VS Code types. */
async function showReferences(uri: string, position: any, locations: any[]): Promise<void> {
  const converter = client?.protocol2CodeConverter;
  if (!converter) {
    return;
  }
  await vscode.commands.executeCommand(
    "editor.action.showReferences",
    vscode.Uri.parse(uri),
    converter.asPosition(position),
    locations.map((l) => converter.asLocation(l)),
  );
}

async function start(): Promise<void> {
  client = createClient();
  try {
    await client.start();
  } catch (e) {
    vscode.window.showErrorMessage(
      `Gantry: cannot start \`${serverPath()} lsp\` (${e}). Set "gantry.path" to the gantry binary.`,
    );
  }
}

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  context.subscriptions.push(
    vscode.commands.registerCommand("gantry.showReferences", showReferences),
    vscode.commands.registerCommand("gantry.restartServer", async () => {
      await client?.stop();
      await start();
    }),
    vscode.workspace.onDidChangeConfiguration(async (event) => {
      if (event.affectsConfiguration("gantry.path")) {
        await client?.stop();
        await start();
      }
    }),
  );
  await start();
}

export async function deactivate(): Promise<void> {
  await client?.stop();
}

//! `gantry`: one binary for the mod host, the checker, the stub generator and
//! the language server. Each subcommand is a thin shell over a library crate.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod run;
mod table_cmd;
mod tools;

#[derive(Parser)]
#[command(
    name = "gantry",
    version,
    about = "A string-keyed message hub for games and mods"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run the mod in DIR: load its scripts into one world, then tick it.
    Run {
        /// The mod folder.
        dir: PathBuf,
        /// How many `Game.Tick` messages to send after the top levels.
        #[arg(long, default_value_t = 1)]
        ticks: u32,
        /// The signature table file (default DIR/.gantry/signatures.json).
        #[arg(long, conflicts_with = "no_table")]
        table: Option<PathBuf>,
        /// Neither load nor save a signature table.
        #[arg(long)]
        no_table: bool,
    },
    /// Check every script in DIR against the signature table, like the
    /// language server would; exits 1 when any finding is an error.
    Check {
        /// The mod folder.
        dir: PathBuf,
        /// Output format.
        #[arg(long, value_enum, default_value_t = tools::Format::Text)]
        format: tools::Format,
    },
    /// Write LuaLS/EmmyLua meta files and Rhai definitions for the table of DIR.
    Stubs {
        /// The mod folder.
        dir: PathBuf,
        /// Where to write (default DIR/.gantry/stubs/).
        #[arg(long)]
        out: Option<PathBuf>,
        /// Read this table file instead of DIR/.gantry/signatures.json.
        #[arg(long)]
        table: Option<PathBuf>,
    },
    /// Serve the language server over stdio.
    Lsp,
    /// Print the signature table of a mod folder (DIR/.gantry/signatures.json).
    Table {
        /// The mod folder.
        dir: PathBuf,
        /// Read this table file instead.
        #[arg(long)]
        table: Option<PathBuf>,
        /// Print the raw JSON instead of the readable summary.
        #[arg(long)]
        json: bool,
    },
}

fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("GANTRY_LOG")
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
        )
        .with_writer(std::io::stderr)
        .init();
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Run {
            dir,
            ticks,
            table,
            no_table,
        } => run::run(run::RunArgs {
            dir,
            ticks,
            table,
            no_table,
        }),
        Command::Check { dir, format } => tools::check(&dir, format),
        Command::Stubs { dir, out, table } => tools::stubs(&dir, out.as_deref(), table.as_deref()),
        Command::Lsp => tools::lsp(),
        Command::Table { dir, table, json } => table_cmd::run(&dir, table.as_deref(), json),
    };
    match result {
        Ok(code) => code,
        Err(error) => {
            eprintln!("gantry: {error:#}");
            ExitCode::from(2)
        }
    }
}

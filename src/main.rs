//! `gantry`: one binary for the mod host, the checker, the stub generator and
//! the language server. Each subcommand is a thin shell over a library crate.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod table_cmd;

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

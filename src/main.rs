//! `estx-tui`: parses the command line, sends logs to a file (never to the
//! terminal), and runs the command on a tokio runtime. Everything else lives
//! in the library (`estx::cli`).

use estx::cli::global::LogTarget;
use estx::cli::{self, parse_args, Cli, ParseFailure};
use estx::local_files::{private_dir, RotatingFile, MAX_BYTES};
use std::path::Path;
use tracing_appender::non_blocking::WorkerGuard;
use tracing_subscriber::EnvFilter;

fn main() {
    let cli: Cli = match parse_args(std::env::args_os()) {
        Ok(cli) => cli,
        Err(ParseFailure::Usage(e)) => e.exit(),
        Err(ParseFailure::Profile(e)) => {
            cli::output::err(e);
            std::process::exit(cli::EXIT_USAGE);
        }
    };
    // Before the runtime's threads start: a poller reuses its memory and
    // takes no huge pages (`estx::allocator`).
    estx::allocator::set_up(cli.dashboard.interval);
    let target = cli.log_target();
    if target == LogTarget::NoHome {
        cli::output::err("warning: neither XDG_STATE_HOME nor HOME is set; not logging");
    }
    let guard = target.path().and_then(|p| init_logging(p, &cli));
    install_panic_report(target.path());
    let code = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => {
            let code = rt.block_on(cli::run(cli));
            drop(rt);
            code
        }
        Err(e) => {
            cli::output::err(format_args!("cannot start the async runtime: {e}"));
            1
        }
    };
    tracing::info!(code, "exit");
    // Flush the log before exiting: `process::exit` runs no destructors.
    drop(guard);
    std::process::exit(code);
}

/// Logs to `path` (appending, private, rotated: [`estx::local_files`]),
/// at `--log-level`, else filtered by `ESTX_LOG` (default `info`). The
/// default location's directory is created 0700. If the file cannot be
/// opened, says so once on stderr and logs nothing.
fn init_logging(path: &Path, cli: &Cli) -> Option<WorkerGuard> {
    let dir = match (&cli.global.log_file, path.parent()) {
        (None, Some(dir)) => private_dir(dir),
        _ => Ok(()),
    };
    let file = match dir.and_then(|()| RotatingFile::open(path, MAX_BYTES)) {
        Ok(f) => f,
        Err(e) => {
            cli::output::err(format_args!(
                "warning: cannot open log file {}: {e}; not logging",
                path.display()
            ));
            return None;
        }
    };
    let (writer, guard) = tracing_appender::non_blocking(file);
    let filter = match cli.global.log_level {
        Some(level) => EnvFilter::new(level.directive()),
        None => EnvFilter::try_from_env("ESTX_LOG").unwrap_or_else(|_| EnvFilter::new("info")),
    };
    let installed = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(writer)
        .with_ansi(false)
        .try_init();
    installed.ok().map(|_| guard)
}

/// Installs color-eyre's error-report hook, and a panic hook that writes
/// color-eyre's full panic report to the log file but shows the user one
/// line, so no panic spills a backtrace onto the terminal.
fn install_panic_report(log_path: Option<&Path>) {
    let (panic_hook, eyre_hook) = color_eyre::config::HookBuilder::default()
        .display_env_section(false)
        .theme(color_eyre::config::Theme::new())
        .into_hooks();
    // Only fails if a hook is already installed, which is harmless.
    let _ = eyre_hook.install();
    let log = log_path.map_or_else(|| "no log file".into(), |p| p.display().to_string());
    std::panic::set_hook(Box::new(move |info| {
        let report = panic_hook.panic_report(info);
        tracing::error!("panic: {report}");
        let msg = info
            .payload()
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| info.payload().downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "unknown cause".into());
        cli::output::err(format_args!("internal error: {msg} (details in {log})"));
    }));
}

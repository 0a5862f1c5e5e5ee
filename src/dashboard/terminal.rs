//! Terminal setup and teardown. The terminal is restored on every exit path:
//! normal return, error (the caller restores), and panic (the hook restores
//! before the panic message is printed).

use crossterm::event::{DisableMouseCapture, EnableMouseCapture};
use crossterm::execute;
use ratatui::DefaultTerminal;
use std::io;

/// Enters raw mode and the alternate screen, enables the mouse, and chains a
/// panic hook that puts the terminal back first.
pub fn init() -> io::Result<DefaultTerminal> {
    let terminal = ratatui::try_init()?;
    execute!(io::stdout(), EnableMouseCapture)?;
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let _ = execute!(io::stdout(), DisableMouseCapture);
        previous(info);
    }));
    Ok(terminal)
}

/// Leaves the alternate screen and raw mode; safe to call more than once.
pub fn restore() {
    let _ = execute!(io::stdout(), DisableMouseCapture);
    ratatui::restore();
}

//! Printing that a closed pipe does not crash.
//!
//! `gantry table DIR | head` closes stdout after ten lines, and `println!`
//! panics on the next one ("failed printing to stdout: Broken pipe"); in a
//! `gantry run … | head` the panic came from a script's `print` and the
//! table was never saved. Every line the CLI or a script prints goes through
//! here instead: once a stream reports `BrokenPipe` nobody is reading it any
//! more, so printing to it stops quietly for the rest of the process while
//! the work goes on (a run still ticks, saves its table and exits with the
//! status it would have had). Any other write error is dropped the same
//! way: there is nowhere left to say it.

use std::fmt;
use std::io::{self, Write};
use std::sync::atomic::{AtomicBool, Ordering};

/// Set once stdout reported a broken pipe.
static STDOUT_CLOSED: AtomicBool = AtomicBool::new(false);
/// Set once stderr reported a broken pipe.
static STDERR_CLOSED: AtomicBool = AtomicBool::new(false);

/// Writes to stdout, unless it was found closed.
pub fn stdout(text: fmt::Arguments<'_>) {
    write(&STDOUT_CLOSED, io::stdout().lock(), text);
}

/// Writes to stderr, unless it was found closed.
pub fn stderr(text: fmt::Arguments<'_>) {
    write(&STDERR_CLOSED, io::stderr().lock(), text);
}

fn write(closed: &AtomicBool, mut stream: impl Write, text: fmt::Arguments<'_>) {
    if closed.load(Ordering::Relaxed) {
        return;
    }
    if let Err(error) = stream.write_fmt(text)
        && error.kind() == io::ErrorKind::BrokenPipe
    {
        closed.store(true, Ordering::Relaxed);
    }
}

/// `print!` that stops quietly when stdout is closed.
macro_rules! out {
    ($($arg:tt)*) => { $crate::out::stdout(format_args!($($arg)*)) };
}

/// `println!` that stops quietly when stdout is closed.
macro_rules! outln {
    ($($arg:tt)*) => { $crate::out::stdout(format_args!("{}\n", format_args!($($arg)*))) };
}

/// `eprint!` that stops quietly when stderr is closed.
macro_rules! err {
    ($($arg:tt)*) => { $crate::out::stderr(format_args!($($arg)*)) };
}

/// `eprintln!` that stops quietly when stderr is closed.
macro_rules! errln {
    ($($arg:tt)*) => { $crate::out::stderr(format_args!("{}\n", format_args!($($arg)*))) };
}

pub(crate) use {err, errln, out, outln};

#[cfg(test)]
mod tests {
    use super::*;

    /// A stream whose reader has gone.
    struct Closed(usize);

    impl Write for Closed {
        fn write(&mut self, _: &[u8]) -> io::Result<usize> {
            self.0 += 1;
            Err(io::ErrorKind::BrokenPipe.into())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn a_closed_stream_is_written_to_once_then_left_alone() {
        let closed = AtomicBool::new(false);
        let mut stream = Closed(0);
        write(&closed, &mut stream, format_args!("one\n"));
        write(&closed, &mut stream, format_args!("two\n"));
        assert!(closed.load(Ordering::Relaxed));
        assert_eq!(stream.0, 1);
    }
}

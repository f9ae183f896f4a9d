//! The terminal after an abort. A failed allocation (`handle_alloc_error`) or an
//! `abort()` in a library ends the process with SIGABRT: no destructor or panic hook
//! runs, so the terminal would stay raw and on the alternate screen. A SIGABRT handler
//! restores it with async-signal-safe calls only — `tcsetattr` back to the mode saved
//! before raw mode, `write` of the bytes [`super::restore_terminal`] sends (leave the
//! alternate screen, show the cursor) and a line saying what happened — then ends
//! the process with the default action, so its status still says SIGABRT. Once the
//! app has given the terminal back the handler is disarmed: an abort then ends the
//! process as it would without it.

use ratatui::crossterm::Command;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};

/// What the handler needs, prepared before raw mode starts.
struct Restore {
    /// The terminal's file descriptor (standard input, or /dev/tty as crossterm uses).
    fd: libc::c_int,
    /// Its mode before raw mode.
    mode: libc::termios,
    /// Leave the alternate screen, show the cursor, then the message.
    bytes: Vec<u8>,
}

static RESTORE: OnceLock<Restore> = OnceLock::new();

/// The app holds the terminal (raw mode, alternate screen): the handler restores it.
static ARMED: AtomicBool = AtomicBool::new(false);

/// Save the terminal's mode and install the handler; call before raw mode starts.
/// Does nothing where the terminal's mode cannot be read.
pub(super) fn install() {
    if RESTORE.get().is_some() {
        ARMED.store(true, Ordering::SeqCst);
        return;
    }
    // SAFETY: isatty and open take a descriptor and a NUL-terminated path.
    let fd = unsafe {
        if libc::isatty(libc::STDIN_FILENO) == 1 {
            libc::STDIN_FILENO
        } else {
            libc::open(c"/dev/tty".as_ptr(), libc::O_RDWR | libc::O_CLOEXEC)
        }
    };
    if fd < 0 {
        return;
    }
    // SAFETY: termios is plain data; tcgetattr fills it or fails.
    let mut mode: libc::termios = unsafe { std::mem::zeroed() };
    if unsafe { libc::tcgetattr(fd, &mut mode) } != 0 {
        return;
    }
    let mut ansi = String::new();
    let _ = ratatui::crossterm::terminal::LeaveAlternateScreen.write_ansi(&mut ansi);
    let _ = ratatui::crossterm::cursor::Show.write_ansi(&mut ansi);
    ansi.push_str(
        "\r\nsgpw was aborted (SIGABRT); the terminal is restored. Runs still training \
         are lost; the autosave journal holds every run that had finished.\r\n",
    );
    if RESTORE
        .set(Restore {
            fd,
            mode,
            bytes: ansi.into_bytes(),
        })
        .is_err()
    {
        return;
    }
    ARMED.store(true, Ordering::SeqCst);
    let handler: extern "C" fn(libc::c_int) = on_abort;
    // SAFETY: the handler only makes async-signal-safe calls (tcsetattr, write,
    // signal, raise) on data prepared before it was installed.
    unsafe {
        libc::signal(libc::SIGABRT, handler as libc::sighandler_t);
    }
}

/// The terminal is restored (the app ended normally, or a panic unwound past it):
/// nothing for the handler to do.
pub(super) fn disarm() {
    ARMED.store(false, Ordering::SeqCst);
}

extern "C" fn on_abort(_: libc::c_int) {
    if let Some(r) = RESTORE.get().filter(|_| ARMED.load(Ordering::SeqCst)) {
        // SAFETY: async-signal-safe calls on data that is never mutated after `install`.
        unsafe {
            libc::tcsetattr(r.fd, libc::TCSANOW, &r.mode);
            libc::write(libc::STDOUT_FILENO, r.bytes.as_ptr().cast(), r.bytes.len());
        }
    }
    // SAFETY: restoring the default action and raising again are async-signal-safe.
    unsafe {
        libc::signal(libc::SIGABRT, libc::SIG_DFL);
        libc::raise(libc::SIGABRT);
    }
}

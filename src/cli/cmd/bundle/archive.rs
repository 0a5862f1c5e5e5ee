//! Writing a bundle: a gzip-compressed tar (`tar` + `flate2`) of text
//! files, each 0600, written to `OUT.partial` (created new and private,
//! never through a symlink) and renamed to `OUT` once complete, so a
//! reader never sees half an archive and nobody else can read it.

use chrono::{DateTime, Utc};
use flate2::write::GzEncoder;
use flate2::Compression;
use std::fs::OpenOptions;
use std::io;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

/// Writes `files` (path inside the archive, text) to `out`.
pub fn write(out: &Path, files: &[(String, String)], mtime: DateTime<Utc>) -> io::Result<()> {
    let mut partial = out.as_os_str().to_owned();
    partial.push(".partial");
    let file = OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW)
        .open(&partial)?;
    let written = (|| {
        let mut tar = tar::Builder::new(GzEncoder::new(file, Compression::default()));
        for (path, text) in files {
            let mut header = tar::Header::new_gnu();
            header.set_size(text.len() as u64);
            header.set_mode(0o600);
            header.set_mtime(mtime.timestamp().max(0) as u64);
            tar.append_data(&mut header, path, text.as_bytes())?;
        }
        tar.into_inner()?.finish()?.sync_all()
    })();
    match written {
        Ok(()) => std::fs::rename(&partial, out),
        Err(e) => {
            let _ = std::fs::remove_file(&partial);
            Err(e)
        }
    }
}

//! The page's files (`web/`), embedded in the binary at build time so `schedlens view`
//! is one file to copy to a server. `/` is `web/index.html`; every other file is served
//! under `/web/` with its type. A test checks that every file in `web/` is listed here.
//! For work on the page, `SCHEDLENS_WEB_DIR=crates/view/web` serves the files from disk
//! instead (reload the page, no rebuild); the list of files stays the embedded one.

use std::borrow::Cow;
use std::path::Path;

/// (path under web/, content type, bytes)
const FILES: &[(&str, &str, &[u8])] = &[
    ("index.html", "text/html; charset=utf-8", include_bytes!("../web/index.html")),
    ("style.css", "text/css; charset=utf-8", include_bytes!("../web/style.css")),
    ("js/main.js", JS, include_bytes!("../web/js/main.js")),
    ("js/source.js", JS, include_bytes!("../web/js/source.js")),
    ("js/tile-format.js", JS, include_bytes!("../web/js/tile-format.js")),
    ("js/tile-store.js", JS, include_bytes!("../web/js/tile-store.js")),
    ("js/timescale.js", JS, include_bytes!("../web/js/timescale.js")),
    ("js/state.js", JS, include_bytes!("../web/js/state.js")),
    ("js/format.js", JS, include_bytes!("../web/js/format.js")),
    ("js/draw.js", JS, include_bytes!("../web/js/draw.js")),
    ("js/panels.js", JS, include_bytes!("../web/js/panels.js")),
    ("js/view.js", JS, include_bytes!("../web/js/view.js")),
];

const JS: &str = "text/javascript; charset=utf-8";

/// The file a request path names, with its content type.
pub fn find(path: &str) -> Option<(&'static str, Cow<'static, [u8]>)> {
    let name = if path == "/" || path == "/index.html" { "index.html" } else { path.strip_prefix("/web/")? };
    let &(file, content_type, bytes) = FILES.iter().find(|(file, _, _)| *file == name)?;
    let from_disk =
        std::env::var_os("SCHEDLENS_WEB_DIR").and_then(|dir| std::fs::read(Path::new(&dir).join(file)).ok());
    Some((content_type, from_disk.map_or(Cow::Borrowed(bytes), Cow::Owned)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn files_under(dir: &Path, prefix: &str, out: &mut Vec<String>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let entry = entry.unwrap();
            let name = format!("{prefix}{}", entry.file_name().to_string_lossy());
            if entry.file_type().unwrap().is_dir() {
                if name != "test" {
                    files_under(&entry.path(), &format!("{name}/"), out);
                }
            } else {
                out.push(name);
            }
        }
    }

    #[test]
    fn every_web_file_is_embedded() {
        let mut on_disk = Vec::new();
        files_under(&Path::new(env!("CARGO_MANIFEST_DIR")).join("web"), "", &mut on_disk);
        on_disk.sort();
        let mut listed: Vec<String> = FILES.iter().map(|(name, _, _)| name.to_string()).collect();
        listed.sort();
        assert_eq!(listed, on_disk);
    }

    #[test]
    fn paths_map_to_files() {
        assert!(find("/").unwrap().0.starts_with("text/html"));
        assert!(find("/web/js/main.js").unwrap().0.starts_with("text/javascript"));
        assert!(find("/web/../Cargo.toml").is_none());
        assert!(find("/js/main.js").is_none());
    }
}

//! The page's files (`web/`), embedded at build time: `schedlens view` serves them (one
//! file to copy to a server) and `schedlens report` inlines them, both from this one
//! table. A test checks that every file in `web/` (but its tests) is listed here.

/// One of the page's files.
#[derive(Copy, Clone, Debug)]
pub struct Asset {
    /// Its path under `web/`, e.g. `js/main.js`.
    pub path: &'static str,
    pub content_type: &'static str,
    pub bytes: &'static [u8],
}

impl Asset {
    /// The file as text (every file of the page is UTF-8).
    pub fn text(&self) -> &'static str {
        std::str::from_utf8(self.bytes).expect("the page's files are UTF-8")
    }

    /// An ES module's name as its siblings import it (`./NAME`), for files under `js/`.
    pub fn module_name(&self) -> Option<&'static str> {
        self.path.strip_prefix("js/")
    }
}

const JS: &str = "text/javascript; charset=utf-8";

/// Every file of the page; the modules in no particular order.
pub const FILES: &[Asset] = &[
    Asset { path: "index.html", content_type: "text/html; charset=utf-8", bytes: include_bytes!("../web/index.html") },
    Asset { path: "style.css", content_type: "text/css; charset=utf-8", bytes: include_bytes!("../web/style.css") },
    Asset { path: "js/main.js", content_type: JS, bytes: include_bytes!("../web/js/main.js") },
    Asset { path: "js/source.js", content_type: JS, bytes: include_bytes!("../web/js/source.js") },
    Asset { path: "js/tile-format.js", content_type: JS, bytes: include_bytes!("../web/js/tile-format.js") },
    Asset { path: "js/tile-store.js", content_type: JS, bytes: include_bytes!("../web/js/tile-store.js") },
    Asset { path: "js/timescale.js", content_type: JS, bytes: include_bytes!("../web/js/timescale.js") },
    Asset { path: "js/state.js", content_type: JS, bytes: include_bytes!("../web/js/state.js") },
    Asset { path: "js/format.js", content_type: JS, bytes: include_bytes!("../web/js/format.js") },
    Asset { path: "js/draw.js", content_type: JS, bytes: include_bytes!("../web/js/draw.js") },
    Asset { path: "js/panels.js", content_type: JS, bytes: include_bytes!("../web/js/panels.js") },
    Asset { path: "js/view.js", content_type: JS, bytes: include_bytes!("../web/js/view.js") },
];

/// The file at `path` under `web/`.
pub fn find(path: &str) -> Option<&'static Asset> {
    FILES.iter().find(|asset| asset.path == path)
}

/// The page's markup (`web/index.html`).
pub fn page() -> &'static Asset {
    find("index.html").expect("the page is embedded")
}

/// The page's style sheet (`web/style.css`).
pub fn style() -> &'static Asset {
    find("style.css").expect("the style sheet is embedded")
}

/// The page's ES modules (`web/js/`), as (name, source).
pub fn modules() -> impl Iterator<Item = (&'static str, &'static str)> {
    FILES.iter().filter_map(|asset| Some((asset.module_name()?, asset.text())))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

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
        let mut listed: Vec<String> = FILES.iter().map(|asset| asset.path.to_string()).collect();
        listed.sort();
        assert_eq!(listed, on_disk);
    }

    #[test]
    fn modules_are_the_files_under_js() {
        let names: Vec<&str> = modules().map(|(name, _)| name).collect();
        assert!(names.contains(&"main.js") && names.contains(&"view.js"));
        assert!(!names.iter().any(|n| n.contains('/') || !n.ends_with(".js")));
        assert!(page().text().contains("<div id=\"app\">"));
        assert!(find("../Cargo.toml").is_none());
    }
}

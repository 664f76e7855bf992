//! Links the OTF2 C library when the `otf2` feature is on: the name pkg-config gives
//! (Debian: `open-trace-format2`), else `otf2`.

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    if std::env::var_os("CARGO_FEATURE_OTF2").is_none() {
        return;
    }
    let from_pkg_config = std::process::Command::new("pkg-config")
        .args(["--libs", "otf2"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).into_owned());
    let flags = from_pkg_config.unwrap_or_else(|| "-lotf2".to_string());
    for flag in flags.split_whitespace() {
        if let Some(dir) = flag.strip_prefix("-L") {
            println!("cargo:rustc-link-search=native={dir}");
        } else if let Some(lib) = flag.strip_prefix("-l") {
            println!("cargo:rustc-link-lib={lib}");
        }
    }
}

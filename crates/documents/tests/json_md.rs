//! `docs/json.md` is the rendering of the documents' definitions: a field changed
//! without the page regenerated fails here.

#[test]
fn docs_json_md_describes_every_document() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs");
    golden::check(
        &root,
        std::path::Path::new(env!("CARGO_TARGET_TMPDIR")),
        "documents",
        "json.md",
        documents::markdown().as_bytes(),
    );
}

//! Re-embed the migrations and the web client whenever their files change.
fn main() {
    println!("cargo:rerun-if-changed=migrations");
    // The embedded web client: a file added to or removed from dist/ is re-embedded too.
    println!("cargo:rerun-if-changed=clients/web/dist");
}

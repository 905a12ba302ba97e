//! Re-embed the migrations whenever an SQL file changes.
fn main() {
    println!("cargo:rerun-if-changed=migrations");
}

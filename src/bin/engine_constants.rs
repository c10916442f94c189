//! Writes the engine's constants for the node (see `node_constants`).
fn main() {
    let root = env!("CARGO_MANIFEST_DIR");
    let path = format!("{root}/{}", resilient_engine::config::node_constants::FILE);
    std::fs::write(&path, resilient_engine::config::node_constants::typescript()).expect("write the constants file");
    eprintln!("wrote {path}");
}

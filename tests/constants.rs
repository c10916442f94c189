//! One defaults table: the node's constants file is the engine's, byte for byte.
use resilient_engine::config::node_constants::{typescript, FILE};

#[test]
fn the_nodes_constants_file_is_generated_from_the_engines_defaults() {
    let path = format!("{}/{FILE}", env!("CARGO_MANIFEST_DIR"));
    let on_disk = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        on_disk == typescript(),
        "{FILE} differs from the engine's defaults: run `cargo run --bin engine-constants`"
    );
}

#[test]
fn the_breakers_default_probe_lease_is_the_one_the_product_computes() {
    use resilient_engine::config::ChainConfig;
    use resilient_engine::limits::breaker::BreakerPolicy;
    let resolved = ChainConfig::default_chain();
    assert_eq!(BreakerPolicy::default(), resolved.providers[0].breaker);
    assert_eq!(BreakerPolicy::default().probe_lease_ms, 20_000, "2 x the 10 s default deadline");
}

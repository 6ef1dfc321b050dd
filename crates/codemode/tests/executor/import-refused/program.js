await import('./Cargo.toml')

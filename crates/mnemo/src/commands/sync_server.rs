//! `mnemo server`: the sync server on PostgreSQL (see mnemo_sync::server).

use crate::cli::ServerArgs;

pub fn run(args: ServerArgs) -> anyhow::Result<i32> {
    let config = mnemo_sync::server::ServerConfig {
        database_url: args.database_url,
        listen: args.listen,
        space_quota_bytes: args.space_quota_mb.saturating_mul(1 << 20),
        requests_per_minute: args.requests_per_minute,
        max_request_bytes: args.max_request_mb.saturating_mul(1 << 20),
        tls: args
            .tls_cert
            .zip(args.tls_key)
            .map(|(cert, key)| mnemo_sync::server::tls::TlsFiles { cert, key }),
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async {
        tokio::select! {
            served = mnemo_sync::server::serve(config) => served,
            _ = tokio::signal::ctrl_c() => Ok(()),
        }
    })?;
    Ok(0)
}

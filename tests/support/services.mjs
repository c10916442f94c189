// Where the Redis and Postgres of this run listen: scripts/lib/services.sh starts them on free
// ports and the test command exports the ports. No default: a test must never reach a server the
// run did not start (a user's own Redis on 6379 would receive test keys).
function envPort(name) {
	const port = Number(process.env[name]);
	if (!Number.isInteger(port) || port <= 0)
		throw new Error(
			`${name} is not set: run through scripts/test.sh, or ` +
				'eval "$(bash scripts/lib/services.sh start)" first (and services.sh stop "$RPC_SERVICES_DIR" after)',
		);
	return port;
}

export const REDIS_PORT = envPort('RPC_REDIS_PORT');
export const PG_PORT = envPort('RPC_PG_PORT');

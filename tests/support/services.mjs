// Where the Redis and Postgres of this run listen: scripts/lib/services.sh starts them on free
// ports and the test command exports the ports. No default: a test must never reach a server the
// run did not start (a user's own Redis on 6379 would receive test keys).
import { execFileSync } from 'node:child_process';

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

/** This run's Postgres as pg (and the stores' postgresPool) take it. */
export const PG_CONNECTION = {
	host: '127.0.0.1',
	port: PG_PORT,
	database: 'rpc',
	user: 'postgres',
};

/** One SQL statement through psql on this run's Postgres; its unaligned rows, trimmed. */
export const psql = (sql) =>
	execFileSync('psql', [
		'-h',
		'127.0.0.1',
		'-p',
		String(PG_PORT),
		'-U',
		'postgres',
		'-d',
		'rpc',
		'-Atqc',
		sql,
	])
		.toString()
		.trim();

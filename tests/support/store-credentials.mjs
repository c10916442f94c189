// n8n's own Redis and Postgres credentials (as `n8n import:credentials` takes them) for this run's
// servers. The port is passed in, so a workflow module that only may use them does not need the
// servers' ports to load (tests/support/services.mjs requires them).
export const redisCredential = (id, name, port) => ({
	id,
	name,
	type: 'redis',
	data: { host: '127.0.0.1', port, database: 0, password: '' },
});

export const postgresCredential = (id, name, port, extra = {}) => ({
	id,
	name,
	type: 'postgres',
	data: {
		host: '127.0.0.1',
		port,
		database: 'rpc',
		user: 'postgres',
		password: '',
		ssl: 'disable',
		...extra,
	},
});

// A provider's row as the Redis store holds it in the global scope (the store's text: a version,
// then the row's JSON), for tests that look at what the engine wrote.

/** Row `kind` (`limit`, `tokens`, ...) of `provider`, parsed; null when absent. */
export async function redisRow(redis, provider, kind) {
	const text = await redis.get(`rpc:{global}:${provider}:${kind}`);
	return text ? JSON.parse(text.slice(text.indexOf('{'))) : null;
}

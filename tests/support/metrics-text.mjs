// Reading Get Metrics' Prometheus text in tests: one sample of the global scope's provider.

/** The value of `resilient_provider_<name>{scope="global",provider="<provider>"}`, or undefined
 * when the text has no such sample. */
export function metricValue(text, name, provider) {
	const line = text
		.split('\n')
		.find((l) => l.startsWith(`resilient_provider_${name}{scope="global",provider="${provider}"}`));
	return line === undefined ? undefined : Number(line.split(' ').at(-1));
}

// Provider secrets from this package's credential. Values never reach outputs, errors or logs.
import { IExecuteFunctions, NodeOperationError } from 'n8n-workflow';

export async function readSecrets(ctx: IExecuteFunctions): Promise<Record<string, string>> {
	let creds: { secrets?: unknown } | undefined;
	try {
		creds = (await ctx.getCredentials('resilientProviderSecretsApi')) as { secrets?: unknown };
	} catch {
		return {}; // no credential attached: providers without a secret still work
	}
	const raw = creds?.secrets;
	if (raw === undefined || raw === '') return {};
	let parsed: unknown = raw;
	if (typeof raw === 'string') {
		try {
			parsed = JSON.parse(raw);
		} catch {
			throw new NodeOperationError(
				ctx.getNode(),
				'Resilient Provider Secrets: "Secrets (JSON)" is not valid JSON (the value is not shown)',
			);
		}
	}
	if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
		throw new NodeOperationError(
			ctx.getNode(),
			'Resilient Provider Secrets: "Secrets (JSON)" must be an object of name -> header value',
		);
	}
	return Object.fromEntries(
		Object.entries(parsed as Record<string, unknown>).map(([k, v]) => [k, String(v)]),
	);
}

/** What to hide: each secret value, and each of its words of 8 characters or more ("Bearer sk-x"
 * also hides "sk-x", which a provider may echo without the scheme). Longest first. */
function needles(secrets: Record<string, string>): string[] {
	const out = new Set<string>();
	for (const v of Object.values(secrets)) {
		if (v.length >= 4) out.add(v);
		for (const word of v.split(/\s+/)) if (word.length >= 8) out.add(word);
	}
	return [...out].sort((a, b) => b.length - a.length);
}

export function redact(text: string, secrets: Record<string, string>): string {
	let out = text;
	for (const v of needles(secrets)) out = out.split(v).join('***');
	return out;
}

/** A provider's answer with every secret replaced, in keys and string values at any depth: a
 * provider that reflects the key it received must not put it on an output item. */
export function redactDeep<T>(value: T, secrets: Record<string, string>): T {
	const list = needles(secrets);
	if (!list.length) return value;
	const hide = (s: string) => {
		for (const v of list) if (s.includes(v)) s = s.split(v).join('***');
		return s;
	};
	const walk = (v: unknown, depth: number): unknown => {
		if (typeof v === 'string') return hide(v);
		if (v === null || typeof v !== 'object') return v;
		if (depth > 64) return hide(JSON.stringify(v)); // absurdly deep: flattened, still redacted
		if (Array.isArray(v)) return v.map((x) => walk(x, depth + 1));
		return Object.fromEntries(
			Object.entries(v as Record<string, unknown>).map(([k, x]) => [hide(k), walk(x, depth + 1)]),
		);
	};
	return walk(value, 0) as T;
}

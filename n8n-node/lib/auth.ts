// Provider authentication with n8n's own credentials (version 2). Types whose credential class
// has an `authenticate` go through n8n's authenticated request helper, which applies it exactly
// as n8n's own nodes do; Basic Auth and Query Auth have none (n8n's HTTP Request node applies
// them itself), so they are applied here from the decrypted credential, the same way.
import type {
	ICredentialDataDecryptedObject,
	IExecuteFunctions,
	IHttpRequestOptions,
} from 'n8n-workflow';

export interface CredentialType {
	name: string;
	displayName: string;
	/** Fields of the decrypted credential that are secret (hidden from outputs and errors). */
	secretFields: string[];
	/** Applied by this package (the credential class has no `authenticate`). */
	manual?: 'basic' | 'query';
}

export const CREDENTIAL_TYPES: CredentialType[] = [
	{ name: 'httpHeaderAuth', displayName: 'Header Auth', secretFields: ['value'] },
	{ name: 'httpBearerAuth', displayName: 'Bearer Auth', secretFields: ['token'] },
	{ name: 'httpQueryAuth', displayName: 'Query Auth', secretFields: ['value'], manual: 'query' },
	{ name: 'httpBasicAuth', displayName: 'Basic Auth', secretFields: ['password'], manual: 'basic' },
	{ name: 'openAiApi', displayName: 'OpenAI', secretFields: ['apiKey', 'headerValue'] },
	{ name: 'anthropicApi', displayName: 'Anthropic', secretFields: ['apiKey', 'headerValue'] },
	{ name: 'googlePalmApi', displayName: 'Google Gemini (PaLM) API', secretFields: ['apiKey'] },
];

export const credentialType = (name: string): CredentialType | undefined =>
	CREDENTIAL_TYPES.find((t) => t.name === name);

/** The decrypted credentials of the types the chain uses, read once per execution. */
export type LoadedCredentials = Record<string, ICredentialDataDecryptedObject>;

export async function loadCredentials(
	ctx: IExecuteFunctions,
	types: string[],
): Promise<LoadedCredentials> {
	const out: LoadedCredentials = {};
	for (const t of new Set(types)) out[t] = await ctx.getCredentials(t);
	return out;
}

/** Every secret value of the loaded credentials, keyed for redaction only (a vendor that
 * reflects the key it received must not put it on an output item). Basic Auth also hides the
 * header it becomes (base64 of user:password). */
export function credentialSecrets(loaded: LoadedCredentials): Record<string, string> {
	const out: Record<string, string> = {};
	for (const [type, data] of Object.entries(loaded)) {
		const def = credentialType(type);
		for (const field of def?.secretFields ?? []) {
			const v = data[field];
			if (typeof v === 'string' && v !== '') out[`${type}.${field}`] = v;
		}
		if (def?.manual === 'basic')
			out[`${type}.header`] = Buffer.from(
				`${String(data.user ?? '')}:${String(data.password ?? '')}`,
			).toString('base64');
	}
	return out;
}

/** One request authenticated with credential `type`, through n8n's authenticated request
 * helper. That helper replaces the request's abort signal with the execution's cancel signal;
 * the context it is called with answers with the attempt's own signal (its deadline, which also
 * follows the execution's cancel), so the per-attempt deadline still ends the request. */
export async function sendWithCredential(
	ctx: IExecuteFunctions,
	type: string,
	loaded: LoadedCredentials,
	options: IHttpRequestOptions,
): Promise<unknown> {
	const manual = credentialType(type)?.manual;
	const data = loaded[type] ?? {};
	if (manual === 'basic')
		options.auth = { username: String(data.user ?? ''), password: String(data.password ?? '') };
	if (manual === 'query') options.qs = { ...options.qs, [String(data.name ?? '')]: data.value };
	const signal = options.abortSignal;
	const scoped = Object.create(ctx, {
		getExecutionCancelSignal: { value: () => signal },
	}) as IExecuteFunctions;
	return await ctx.helpers.httpRequestWithAuthentication.call(scoped, type, options);
}

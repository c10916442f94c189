// Provider authentication with n8n's own credentials (version 2). Types whose credential class
// has an `authenticate` go through n8n's authenticated request helper, which applies it exactly
// as n8n's own nodes do; Basic Auth and Query Auth have none (n8n's HTTP Request node applies
// them itself), so they are applied here from the decrypted credential, the same way.
import * as workflow from 'n8n-workflow';
import {
	NodeOperationError,
	type ICredentialDataDecryptedObject,
	type IExecuteFunctions,
	type IHttpRequestOptions,
	type INode,
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
	// `none` (Credential Types Used's "no credential") opens no slot.
	for (const t of new Set(types)) if (credentialType(t)) out[t] = await ctx.getCredentials(t);
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

/** The functions behind the per-credential *Allowed HTTP Request Domains* setting. n8n-workflow
 * 2 takes one options object; 1.x took positional arguments and left the "none" mode and an
 * empty list to the caller (its HTTP Request node refuses both), so that is done here the same way. */
type Positional = {
	getCredentialAllowedDomains: (data: ICredentialDataDecryptedObject) => string | undefined;
	isDomainAllowed: (url: string, options: { allowedDomains: string }) => boolean;
};
const rules = workflow as unknown as Partial<
	Pick<typeof workflow, 'getCredentialAllowedDomains' | 'isDomainAllowed'>
>;
const positional = (f: unknown) => typeof f === 'function' && f.length >= 2;
const SURFACE = 'Resilient Provider Call';

/** The domains credential `type` may be sent to (read as n8n's HTTP Request node reads it: the
 * URL is the user's), or undefined for any. Throws when the credential forbids such use. */
export function allowedDomains(
	node: () => INode,
	type: string,
	loaded: LoadedCredentials,
): string | undefined {
	const data = loaded[type] ?? {};
	// "All" (or no setting): nothing to check, and no copy of the node to make.
	const mode = data.allowedHttpRequestDomains;
	if (mode !== 'domains' && mode !== 'none') return undefined;
	const get = rules.getCredentialAllowedDomains;
	if (!get) return undefined;
	if (!positional(get)) return get({ node: node(), credentialData: data, surface: SURFACE });
	if (mode === 'none')
		throw new NodeOperationError(
			node(),
			`This credential is configured to prevent use within an ${SURFACE} node`,
		);
	const list = (get as unknown as Positional['getCredentialAllowedDomains'])(data);
	if (!list)
		throw new NodeOperationError(
			node(),
			'No allowed domains specified. Configure allowed domains or change restriction setting.',
		);
	return list;
}

function domainAllowed(url: string, domains: string): boolean {
	const is = rules.isDomainAllowed;
	if (!is) return true;
	return positional(is)
		? (is as unknown as Positional['isDomainAllowed'])(url, { allowedDomains: domains })
		: is({ url, allowedDomains: domains });
}

/** Refuses, before anything is sent, a provider whose URL the credential's allowed domains
 * exclude: a configuration error naming the provider, never a provider failure. */
export function assertUrlAllowed(
	node: INode,
	provider: string,
	url: string,
	type: string,
	loaded: LoadedCredentials,
) {
	const domains = allowedDomains(() => node, type, loaded);
	if (domains && !domainAllowed(url, domains))
		throw new NodeOperationError(
			node,
			`Provider "${provider}": its ${credentialType(type)?.displayName ?? type} credential allows requests only to ${domains}, not to ${new URL(url).host}`,
		);
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
	// Redirects are held to the credential's allowed domains too (n8n's request helper checks).
	const domains = allowedDomains(() => ctx.getNode(), type, loaded);
	if (domains) options.allowedDomains = domains;
	const signal = options.abortSignal;
	const scoped = Object.create(ctx, {
		getExecutionCancelSignal: { value: () => signal },
	}) as IExecuteFunctions;
	return await ctx.helpers.httpRequestWithAuthentication.call(scoped, type, options);
}

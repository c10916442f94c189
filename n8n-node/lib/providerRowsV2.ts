// Version 2's provider rows read into version 1's row fields (the rest of params.ts is shared)
// plus what version 2 adds: a kind (Custom HTTP or an LLM preset that builds the vendor's
// request), an authentication (an n8n credential type or a named secret), and an Options
// collection holding only what the user added.
import { IDataObject, IExecuteFunctions } from 'n8n-workflow';
import { credentialType } from './auth';
import { TOKEN_PARAMETERS } from './plan/tokenLimit';
import { isPresetKind, presetRequest, PresetInputError, type PresetKind } from './presets';

type Fail = (message: string, description?: string) => never;

/** The Options collection of each kind (each kind has its own, so each lists only what applies). */
export const OPTIONS_OF: Record<'custom' | PresetKind, string> = {
	custom: 'options',
	openAiChat: 'openAiChatOptions',
	anthropicMessages: 'anthropicMessagesOptions',
	geminiGenerateContent: 'geminiGenerateContentOptions',
};

/** Per-provider overrides of the node's settings (read by params.ts as in version 1). */
const OVERRIDES = [
	'deadlineMs',
	'maxAttempts',
	'threshold',
	'openMs',
	'rateLimitRequests',
	'rateLimitPeriodMs',
	'rateLimitBurst',
	'maxInFlight',
	'tier',
	'weight',
];

/** How a secret from Secrets (JSON) is sent to each preset's vendor: the secret is the raw key. */
const PRESET_SECRET: Record<PresetKind, { header: string; prefix: string }> = {
	openAiChat: { header: 'Authorization', prefix: 'Bearer ' },
	anthropicMessages: { header: 'x-api-key', prefix: '' },
	geminiGenerateContent: { header: 'x-goog-api-key', prefix: '' },
};

const PRESET_FIELD: Record<string, string> = {
	baseUrl: 'Base URL',
	model: 'Model',
	systemPrompt: 'System Prompt',
	userMessage: 'User Message',
	temperature: 'Temperature',
	maxTokens: 'Max Tokens',
};

export function readRowsV2(
	ctx: IExecuteFunctions,
	i: number,
	rows: IDataObject[],
	fail: Fail,
): IDataObject[] {
	const operation = ctx.getNodeParameter('operation', i, 'callChain') as string;
	// The guard (Check Provider, and Report Outcome reading its Check's rows): a name, the URL
	// handed to the guarded node, and the per-provider settings; nothing is called from here.
	if (operation === 'checkProvider' || operation === 'reportOutcome')
		return rows.map((p) => {
			const options = (p.options ?? {}) as IDataObject;
			const row: IDataObject = { name: p.name, method: 'GET', url: p.url ?? '' };
			for (const o of OVERRIDES) if (options[o] !== undefined) row[o] = options[o];
			return {
				...row,
				queryJson: options.queryJson,
				headersJson: p.headersJson,
				bodyJson: p.bodyJson,
			};
		});
	// Get Provider State and Reset Provider need only the names (the rest of a row is hidden
	// there and never called).
	if (operation !== 'callChain')
		return rows.map((p) => ({ name: p.name, method: 'GET', url: 'http://not-called.invalid' }));
	const chosen = (ctx.getNodeParameter('credentialTypes', i, []) as string[]) ?? [];
	return rows.map((p, k) => {
		const where = `Provider "${String(p.name ?? '').trim() || `#${k + 1}`}" (providers[${k}])`;
		const kind = String(p.kind ?? 'custom');
		if (kind !== 'custom' && !isPresetKind(kind))
			fail(
				`${where}: "Kind" must be custom, openAiChat, anthropicMessages or geminiGenerateContent`,
			);
		const options = (p[OPTIONS_OF[kind as keyof typeof OPTIONS_OF]] ?? {}) as IDataObject;
		const row: IDataObject = { name: p.name };
		// Token limits are Call Chain's: its calls settle them at the usage their answers report.
		for (const o of [...OVERRIDES, ...TOKEN_PARAMETERS])
			if (options[o] !== undefined) row[o] = options[o];
		const auth = String(p.authentication ?? 'none');
		if (auth === 'secret') {
			row.secretName = p.secretName;
			if (String(p.secretName ?? '').trim() === '')
				fail(`${where}: "Secret Name" is empty (Authentication is Secrets (JSON))`);
		} else if (auth !== 'none') {
			const type =
				credentialType(auth) ??
				fail(`${where}: "Authentication" ${JSON.stringify(auth.slice(0, 50))} is unknown`);
			if (!chosen.includes(auth))
				fail(
					`${where}: "Authentication" is ${type.displayName}, which is not in "Credential Types Used": add it there and pick the credential`,
				);
			row.credentialType = auth;
		}
		if (kind === 'custom') {
			return {
				...row,
				method: p.method ?? 'auto',
				url: p.url,
				headersJson: p.headersJson,
				bodyJson: p.bodyJson,
				queryJson: options.queryJson,
				requiredPath: options.requiredPath,
				secretHeader: options.secretHeader,
				usagePath: options.usagePath,
			};
		}
		const preset = kind as PresetKind;
		let built;
		try {
			built = presetRequest(preset, {
				baseUrl: String(options.baseUrl ?? ''),
				model: String(p.model ?? ''),
				systemPrompt: options.systemPrompt === undefined ? undefined : String(options.systemPrompt),
				userMessage:
					typeof p.userMessage === 'string' ? p.userMessage : String(p.userMessage ?? ''),
				temperature: options.temperature as number | undefined,
				maxTokens: options.maxTokens as number | undefined,
			});
		} catch (e) {
			if (!(e instanceof PresetInputError)) throw e;
			const problem = e.message.slice(e.field.length + 2);
			return fail(`${where}: "${PRESET_FIELD[e.field] ?? e.field}" ${problem}`);
		}
		return {
			...row,
			method: built.method,
			url: built.url,
			headersJson: built.headers,
			bodyJson: built.body,
			queryJson: {},
			secretHeader: PRESET_SECRET[preset].header,
			secretPrefix: PRESET_SECRET[preset].prefix,
			preset,
			includeRawResponse: options.includeRawResponse === true,
		};
	});
}

/** What version 2 adds to a provider's request (see ProviderRequest). */
export function extrasV2(row: IDataObject) {
	return {
		credentialType: row.credentialType as string | undefined,
		secretPrefix: row.secretPrefix as string | undefined,
		preset: row.preset as PresetKind | undefined,
		includeRawResponse: row.includeRawResponse === true,
	};
}

// The connected chat models, Model 1 first, checked before anything is sent: as many as the node
// has inputs, each a chat model that can bind tools, each under its own provider name, and all
// alike in what the root node reads from model 1 (response format, built-in tools).
import { NodeConnectionTypes, NodeOperationError, type ISupplyDataFunctions } from 'n8n-workflow';
import type { ChatModel, Presented } from './wrapper';

export interface Connected {
	models: ChatModel[];
	names: string[];
	/** Each input's Tier and Weight, as set (the engine reads them, and their defaults). */
	/** Each model's row settings: its tier and weight, and its Token Limits' fields. */
	routing: Array<Record<string, unknown>>;
	presented: Presented;
}

interface Inspectable {
	lc_namespace?: unknown;
	bindTools?: unknown;
	modelKwargs?: { response_format?: unknown };
	format?: unknown;
	metadata?: Record<string, unknown>;
	lc_kwargs?: { invocationKwargs?: unknown };
}

const label = (k: number) => `Model ${k + 1}`;

export async function connectedModels(ctx: ISupplyDataFunctions): Promise<Connected> {
	const fail = (message: string, description?: string): never => {
		throw new NodeOperationError(ctx.getNode(), message, { description });
	};
	const count = Number(ctx.getNodeParameter('numberInputs', 0, 2));
	if (!Number.isInteger(count) || count < 2 || count > 10)
		fail(`"Number of Models" must be a whole number from 2 to 10, got ${String(count)}`);
	const list =
		(ctx.getNodeParameter('providers.provider', 0, []) as Array<{
			name?: unknown;
			tier?: unknown;
			weight?: unknown;
			tokenLimits?: Record<string, unknown>;
		}>) ?? [];
	const names = Array.from({ length: count }, (_, k) => String(list[k]?.name ?? '').trim());
	names.forEach((n, k) => {
		if (!n)
			fail(
				`Provider Names: ${label(k)} has no provider name`,
				'Give every input a name (one per input, Model 1 first); the name keys its shared breaker and cooldown.',
			);
		const first = names.indexOf(n);
		if (first < k) fail(`Provider Names: ${label(first)} and ${label(k)} are both named "${n}"`);
	});
	if (list.length > count)
		fail(`Provider Names: ${list.length} names for ${count} inputs; remove the extra names`);

	// n8n returns the connected models last input first (and a single one bare).
	const raw = await ctx.getInputConnectionData(NodeConnectionTypes.AiLanguageModel, 0);
	const models = (Array.isArray(raw) ? [...raw].reverse() : raw ? [raw] : []) as ChatModel[];
	if (models.length !== count)
		fail(
			`Connect a chat model to each of the ${count} inputs (Model 1 to Model ${count}); ${models.length} connected`,
		);
	models.forEach((m, k) => {
		const i = m as unknown as Inspectable;
		const chat = Array.isArray(i?.lc_namespace) && i.lc_namespace.includes('chat_models');
		if (!chat || typeof i.bindTools !== 'function')
			fail(
				`${label(k)} ("${names[k]}") is not a chat model that can call tools`,
				'Connect chat model sub-nodes (OpenAI Chat Model, Anthropic Chat Model, …) to every input.',
			);
	});

	// The root node chooses its output parser and built-in tools from the model it sees: model 1's
	// settings are presented, so every model must agree with them.
	const insp = models as unknown as Inspectable[];
	const format = (m: Inspectable) =>
		JSON.stringify({
			response_format: m.modelKwargs?.response_format ?? null,
			format: m.format ?? null,
			output_format: m.metadata?.output_format ?? null,
			thinking:
				(m.lc_kwargs?.invocationKwargs as { thinking?: unknown } | undefined)?.thinking ?? null,
		});
	const builtIn = (m: Inspectable) => JSON.stringify(m.metadata?.tools ?? []);
	for (const [what, of] of [
		['response format', format],
		['built-in tools', builtIn],
	] as const) {
		const k = insp.findIndex((m) => of(m) !== of(insp[0]));
		if (k > 0)
			fail(
				`${label(0)} ("${names[0]}") and ${label(k)} ("${names[k]}") differ in ${what}`,
				`The root node reads the ${what} of the model it sees; set the same on every connected model. ${label(0)}: ${of(insp[0]).slice(0, 300)}; ${label(k)}: ${of(insp[k]).slice(0, 300)}`,
			);
	}
	return {
		models,
		names,
		routing: names.map((_, k) => ({
			tier: list[k]?.tier,
			weight: list[k]?.weight,
			...(list[k]?.tokenLimits ?? {}),
		})),
		presented: {
			modelKwargs: insp[0].modelKwargs,
			format: insp[0].format,
			metadata: insp[0].metadata,
			invocationKwargs: insp[0].lc_kwargs?.invocationKwargs,
		},
	};
}

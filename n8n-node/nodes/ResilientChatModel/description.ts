// The Resilient Chat Model's parameters: how many models, their provider names, and Call Chain's
// own retry policy, breaker, store and scope parameters (version 2's, so the two nodes cannot
// drift apart; shown always, not only under Call Chain's operation). The retry policy takes the
// chat model's column of the engine's defaults (CHAT_DEFAULTS: Fail Over First on). Idempotency
// settings are HTTP-only and left out.
import type { INodeProperties } from 'n8n-workflow';
import { CHAT_DEFAULTS, ENGINE_DEFAULTS as D, PROVIDER_DEFAULTS } from '../../lib/engineConstants';
import { breaker, retryPolicyWith } from '../ResilientProviderCall/v2/policy';
import { answerCheck } from '../ResilientProviderCall/v2/answerCheck';
import { store } from '../ResilientProviderCall/v2/store';
import { keyQuotas } from '../ResilientProviderCall/v2/keyQuotas';
import { numberField } from '../ResilientProviderCall/v2/numberField';
import { tokenFields } from '../ResilientProviderCall/v2/tokenFields';

const HTTP_ONLY = ['addIdempotencyKey', 'idempotencyKey', 'retryUnsafeMethods'];

/** Shown always: this node has no operation for Call Chain's conditions to look at. */
const always = (p: INodeProperties): INodeProperties => {
	const copy = { ...p };
	delete copy.displayOptions;
	return copy;
};

const retryPolicy = retryPolicyWith(CHAT_DEFAULTS);

// Only a chat streams: its first-chunk deadline and idle limit are shown here alone.
const STREAM_ONLY: INodeProperties[] = [
	numberField(
		'First-Chunk Deadline (ms)',
		'firstChunkDeadlineMs',
		D.first_chunk_deadline_ms,
		"When the root node streams: a model that sends no text, tool call or reasoning by then is cut off and the next model takes the call. Must be below the per-attempt deadline. From version 1.2 it is the deadline of a model with no history: then each model's own pace sets it (three times its slowest recent first chunk, at least 2 s; twice a deadline that cut it), within the per-attempt deadline",
	),
	numberField(
		'Stream Idle Limit (ms)',
		'streamIdleMs',
		D.stream_idle_ms,
		"When the root node streams: once a model has begun its answer, the longest pause between two chunks; a longer one breaks the stream (see On a Broken Stream). From version 1.2 the limit follows the stream's own pace (ten times its longest gap so far, at least 2 s) and this is its outer bound",
	),
];

const byName = (a: INodeProperties, b: INodeProperties) =>
	a.displayName.localeCompare(b.displayName);

const shared: INodeProperties[] = [
	{
		...always(retryPolicy),
		options: [
			...(retryPolicy.options as INodeProperties[])
				.filter((o) => !HTTP_ONLY.includes(o.name))
				.map(always)
				// A chat answer is interactive: added, Priority starts at High (version 1.2's default).
				.map((o) => (o.name === 'priority' ? { ...o, default: 'high' } : o)),
			...STREAM_ONLY,
		].sort(byName),
	},
	always(breaker),
	{
		...always(keyQuotas),
		description:
			"What the Fair Share Key (Retry Policy; by workflow where empty, from version 1.2) may use of these models per minute, UTC day or UTC month, across every execution and worker. A call whose key is over a quota fails at once with retry_at at the period's end (key_quota), while other keys go on. Tokens and spend are held at each call's estimate while it is out and settled at the usage its answer reports.",
	},
	chatAnswerCheck(),
	{
		displayName: 'On a Broken Stream',
		name: 'onBrokenStream',
		type: 'options',
		default: 'continue',
		// Version 1 keeps what its docs promise: the broken model's error.
		displayOptions: { show: { '@version': [{ _cnd: { gte: 1.1 } }] } },
		options: [
			{
				name: 'Continue With the Next Model',
				value: 'continue',
				description:
					'The next model that can take the call (or, with none, the same one) is asked to continue the answer where it broke; its text goes on in the same stream, what it repeats cut at the seam',
			},
			{
				name: 'End With an Error',
				value: 'error',
				description: "The caller keeps what it received and gets the broken model's error",
			},
		],
		description:
			"When the root node streams and a model's answer breaks after part of it reached the caller (a dropped connection, the idle limit, the vendor's error event mid-stream)",
	},
	...store,
];

/** Call Chain's Answer Check, worded for connected models. */
function chatAnswerCheck(): INodeProperties {
	const texts: Record<string, string> = {
		checkFinish:
			'Whether an empty answer, one cut at its token limit (finish_reason length, stop_reason max_tokens, MAX_TOKENS), filtered (content_filter, SAFETY) or refused (a refusal) moves on to the next model. Not added: on from version 1.1 of this node, off before. A streamed answer is checked before its first chunk reaches the root node only when nothing of it committed.',
		repairRound:
			"Whether a model's answer off the JSON Schema gets one more call to the same model, with its answer and the validation errors, before the next model takes the call (counted as one call of that model)",
		jsonSchema:
			"The answer must satisfy this JSON Schema on every model: its text (a Markdown code fence taken off) or, under an AI Agent with a required output format, its final-answer tool call (the Structured Output Parser's output wrapper taken off, so this is the schema you give the parser). When the root node streams, the answer is held until it passes. An answer that misses it moves on to the next model; with none left the call fails with the validation errors.",
	};
	return {
		...always(answerCheck),
		options: (answerCheck.options as INodeProperties[]).map((o) =>
			texts[o.name] ? { ...o, description: texts[o.name] } : o,
		),
	};
}

export const properties: INodeProperties[] = [
	{
		displayName:
			'Each input is a provider of the fallback chain, Model 1 first. The name keys its shared state: a provider named the same in a Call Chain node shares one breaker and cooldown.',
		name: 'chainNotice',
		type: 'notice',
		default: '',
	},
	{
		displayName: 'Number of Models',
		name: 'numberInputs',
		type: 'options',
		noDataExpression: true,
		options: Array.from({ length: 9 }, (_, k) => ({ name: String(k + 2), value: k + 2 })),
		default: 2,
		description: 'How many chat models to connect; each one is an input, in fallback order',
	},
	{
		displayName: 'Provider Names',
		name: 'providers',
		type: 'fixedCollection',
		typeOptions: { multipleValues: true, sortable: true },
		default: {},
		placeholder: 'Add Provider Name',
		description: 'One name per input, Model 1 first',
		options: [
			{
				displayName: 'Provider',
				name: 'provider',
				values: [
					{
						displayName: 'Name',
						name: 'name',
						type: 'string',
						default: '',
						required: true,
						placeholder: 'openai',
						description:
							'Keys the shared state of this input (breaker, cooldown, rate limit) in the store',
					},
					numberField(
						'Tier',
						'tier',
						PROVIDER_DEFAULTS.tier,
						'Models of tier 1 first; a higher tier takes calls only while no model of a lower one can',
					),
					numberField(
						'Weight',
						'weight',
						PROVIDER_DEFAULTS.weight,
						"This model's share of calls in its tier under Weighted routing (Retry Policy > Routing); 0 drains it",
					),
					{
						displayName: 'Token Limits',
						name: 'tokenLimits',
						type: 'collection',
						default: {},
						placeholder: 'Add Limit',
						description:
							"This model's tokens per minute and spend cap, shared by every execution and worker, and its prices",
						options: tokenFields().sort((x, y) => x.displayName.localeCompare(y.displayName)),
					},
				],
			},
		],
	},
	...shared,
];

// One call of the Resilient Chat Model: one item of the engine's loop (lib/itemLoop.ts), each
// attempt a call to one connected model, classified into the engine's outcome. One run-data entry
// per call on the sub-node (provider, attempts, skips, transitions) shows which model served.
import {
	NodeConnectionTypes,
	NodeOperationError,
	type IDataObject,
	type ISupplyDataFunctions,
} from 'n8n-workflow';
import type { AIMessageChunk, BaseMessage, BaseMessageLike } from '@langchain/core/messages';
import type { ChatResult } from '@langchain/core/outputs';
import type { Engine, Outcome } from '../engine';
import type { ItemPlan } from '../params';
import { runItem } from '../itemLoop';
import { continuationMessages } from './continuation';
import { Seam } from './seam';
import { usageOf } from '../tokens/usage';
import { chatTokenFacts } from '../tokens/chatFacts';
import type { ItemResult } from '../itemResult';
import { CounterDeltas } from '../counters';
import { runData } from '../resilience';
import { itemStore, type StoreSettings } from '../store/open';
import type { StateStore } from '../store/types';
import { Cancelled } from '../attemptAbort';
import { attempt } from '../attempt';
import { DEADLINE_CODE } from '../engineConstants';
import { answered, errorText, outcomeOfModelError } from './outcome';
import { ChunkChannel } from './chunkChannel';
import { chatAnswerParts, missText, repairTurn, textOf } from './answerParts';
import type { Miss } from '../answerCheck/repair';
import type { ParserReading } from '../answerCheck/parserReading';
import { checkedFacts } from '../answerCheck/facts';
import { streamAttempt } from './streamAttempt';
import { takeOver } from './takeOver';
import type { ChatCall, ChatModel } from './wrapper';
import type { Conversations } from './conversations';

export interface ChatChain {
	ctx: ISupplyDataFunctions;
	engine: Engine;
	plan: ItemPlan;
	shared: ((scope: string) => StateStore) | null;
	storeCfg: StoreSettings;
	/** Which model served each conversation's last call: its next round tries it first. */
	conversations: Conversations;
	/** How the root node's output parser reads an answer, where one was found. */
	parser?: ParserReading;
}

/** Options of the root node's call that the connected model gets too (not its callbacks: the
 * connected models trace themselves; nor its signal: each attempt has its own deadline). */
function forwarded(options: Record<string, unknown>): Record<string, unknown> {
	const out: Record<string, unknown> = {};
	for (const [k, v] of Object.entries(options)) {
		if (!['signal', 'timeout', 'callbacks', 'runName', 'runId', 'configurable'].includes(k))
			out[k] = v;
	}
	return out;
}

export function chatCall(chain: ChatChain): ChatCall {
	const { ctx, plan } = chain;
	const index = new Map(plan.requests.map((r, k) => [r.name, k]));

	/** One model call as one item of the engine's loop; `attempt` calls one model. Returns the
	 * serving model's answer (its message, or nothing when streamed), or throws what the
	 * caller should see. */
	async function run(
		models: ChatModel[],
		messages: BaseMessage[],
		options: Record<string, unknown>,
		streamed: ChunkChannel<AIMessageChunk> | undefined,
	): Promise<{ message?: BaseMessage; entry: IDataObject }> {
		for (const m of models) takeOver(m);
		const { index: runIndex } = ctx.addInputData(NodeConnectionTypes.AiLanguageModel, [
			[{ json: { messages: messages.map(describe) } }],
		]);
		// The run index is this sub-node's count of model calls in the execution.
		const correlationId = `${ctx.getExecutionId()}:chat:${runIndex}`;
		const signals = [ctx.getExecutionCancelSignal?.(), options.signal as AbortSignal].filter(
			(s): s is AbortSignal => s instanceof AbortSignal,
		);
		const cancel = signals.length > 1 ? AbortSignal.any(signals) : signals[0];
		const errors = new Map<number, unknown>();
		const passed = forwarded(options);
		// The streamed answer the caller has so far, across this call's attempts.
		const answer = { text: '' };
		// Each model's last answer off the schema, and the messages of its repair round.
		const misses = new Map<number, Miss>();
		const checked = (provider: number, answer: BaseMessage) => {
			const parts = chatAnswerParts(answer, chain.parser);
			const facts = checkedFacts(plan.answerCheck, parts)?.facts;
			if (facts?.schema_errors?.length)
				misses.set(provider, { text: missText(parts), errors: facts.schema_errors });
			return facts;
		};
		const asked = (provider: number, repair: boolean | undefined): BaseMessageLike[] => {
			const miss = repair ? misses.get(provider) : undefined;
			return miss ? [...messages, ...repairTurn(miss)] : messages;
		};
		const invoke = (provider: number, deadlineMs: number, signal?: AbortSignal, repair?: boolean) =>
			attempt<'deadline'>(
				signal,
				async (abort) => {
					abort.after(deadlineMs, 'deadline');
					const answer = await models[provider].invoke(asked(provider, repair), {
						...passed,
						signal: abort.signal,
					});
					// The answer as it came, for the engine's answer checks and its token usage.
					return { outcome: answered(checked(provider, answer), usageOf(answer)), body: answer };
				},
				(error, fired) => {
					errors.set(provider, error);
					const outcome: Outcome = fired
						? { kind: 'error', code: DEADLINE_CODE }
						: outcomeOfModelError(error);
					// The error's text stands for the vendor's error body (runItem offers it to the
					// engine, which reads it only for its rules, e.g. a too-long input).
					return { outcome, body: errorText(error) };
				},
			);
		let result: ItemResult;
		// One store for the call and its counters: a store found down (fail-open) stays down for
		// the counters' write instead of being waited on a second time.
		const store = itemStore(chain.shared, plan.scope, chain.storeCfg, ctx.logger);
		try {
			result = await runItem({
				call: (req, _headers, deadlineMs, signal, limits, claim) => {
					const provider = index.get(req.name) as number;
					if (!streamed || !limits) return invoke(provider, deadlineMs, signal, req.repair);
					// A continuation: the conversation and the answer so far, its chunks meeting the
					// answer at a seam that cuts what it repeats.
					const continuing = req.continuation === true;
					return streamAttempt({
						model: models[provider],
						messages: continuing
							? continuationMessages(asked(provider, req.repair), answer.text, models[provider])
							: asked(provider, req.repair),
						answer,
						seam: continuing
							? new Seam(answer.text, (h, n, e) => chain.engine.seam(h, n, e))
							: undefined,
						options: passed,
						limits,
						cancel: signal,
						commits: (f) =>
							chain.engine.commits(f.text_chars, f.tool_call_chunks, f.reasoning_chars),
						claim,
						deliver: (chunk) => streamed.push(chunk),
						failed: (error) => errors.set(provider, error),
						check: (answer) => checked(provider, answer),
						fails: (facts) => chain.engine.answerFails(facts),
						// A schema needs the whole answer: the stream is held until it passes.
						hold: plan.answerCheck?.schema !== undefined,
					});
				},
				logger: ctx.logger,
				engine: chain.engine,
				store,
				plan,
				secrets: {},
				correlationId,
				cancel,
				streamed: streamed !== undefined,
				prefer: chain.conversations.servedBy(messages),
				// Token limits reserve, and Key Quotas may count, each call's tokens.
				tokens:
					plan.config.providers.some((p) => p.token_limit) || plan.config.key_quotas?.length
						? chatTokenFacts(messages, models)
						: undefined,
			});
		} catch (error) {
			const e =
				error instanceof Cancelled
					? new NodeOperationError(ctx.getNode(), 'Execution cancelled')
					: new NodeOperationError(ctx.getNode(), error as Error);
			ctx.addOutputData(NodeConnectionTypes.AiLanguageModel, runIndex, e);
			throw e;
		}
		// Counted as Call Chain's items are: the engine's counters, one checked write. A model call
		// is its own execution step (no batch to share a write with); a write that failed says so
		// in the log, as there is no item to carry the warning.
		const counters = new CounterDeltas();
		counters.add(
			plan.scope,
			plan.requests.map((r) => r.name),
			result.counters,
			result.committed,
		);
		for (const warning of await counters.write(() => store))
			ctx.logger.warn(`resilient-chat-model: ${warning}`);
		const entry = runData(result, correlationId);
		ctx.addOutputData(NodeConnectionTypes.AiLanguageModel, runIndex, [[{ json: entry }]]);
		const end = result.end;
		if (end.kind === 'done') {
			chain.conversations.remember(messages, end.provider);
			return { message: result.body as BaseMessage | undefined, entry };
		}
		if (end.kind === 'defer') throw unavailable(ctx, entry);
		// A non-retryable answer (a 400, a bad key) or a stream broken after its first chunk:
		// the model's own error, as without this node.
		const lastAttempt = result.attempts[result.attempts.length - 1];
		const last = lastAttempt ? errors.get(Number(lastAttempt.provider)) : undefined;
		if (last instanceof Error) throw last;
		throw new NodeOperationError(ctx.getNode(), `No connected model could answer (${end.reason})`, {
			description: JSON.stringify(entry).slice(0, 2000),
		});
	}

	return {
		async generate(models, messages, options) {
			const { message, entry } = await run(models, messages, options, undefined);
			const answer = message as BaseMessage;
			return {
				generations: [{ text: textOf(answer), message: answer }],
				llmOutput: { resilience: entry },
			} as ChatResult;
		},
		stream(models, messages, options) {
			const channel = new ChunkChannel<AIMessageChunk>();
			// A caller that stops reading (the root node's run aborted) ends the model's stream.
			const gone = new AbortController();
			const given = options.signal instanceof AbortSignal ? [options.signal] : [];
			const signal = AbortSignal.any([...given, gone.signal]);
			run(models, messages, { ...options, signal }, channel).then(
				() => channel.end(),
				(error: unknown) => channel.end({ error }),
			);
			return (async function* relay() {
				try {
					yield* channel.drain();
				} finally {
					gone.abort();
				}
			})();
		},
	};
}

/** Every model cooling down (or the call's budget spent): fail at once, saying when to retry. */
function unavailable(ctx: ISupplyDataFunctions, entry: IDataObject) {
	const error = new NodeOperationError(
		ctx.getNode(),
		`No connected model can answer now (${entry.reason}); retry_at ${entry.retry_at}`,
		{
			description: `Every model of the chain is cooling down, rate-limited or out of budget. Retry at ${entry.retry_at} (reason: ${entry.reason}).`,
		},
	);
	Object.assign(error, { retry_at: entry.retry_at, reason: entry.reason });
	return error;
}

function describe(m: BaseMessage): IDataObject {
	return {
		type: m.getType?.() ?? (m as unknown as { type?: string }).type,
		content: m.content as never,
	};
}

// The chat model the root node (AI Agent, Basic LLM Chain) sees: a LangChain BaseChatModel whose
// every call is one item of the engine's loop (lib/itemLoop.ts), each attempt a call to one of the
// connected models. @langchain/core is no dependency of this package (nor a peer): required here
// at run time, it resolves through the NODE_PATH n8n sets to n8n's own copy.
import type { BaseChatModel } from '@langchain/core/language_models/chat_models';
import type { CallbackManagerForLLMRun } from '@langchain/core/callbacks/manager';
import type { AIMessageChunk, BaseMessage } from '@langchain/core/messages';
import type { ChatGenerationChunk, ChatResult } from '@langchain/core/outputs';

/** A connected model, as far as this wrapper uses it. */
export type ChatModel = BaseChatModel;

/** What one model call does: run the engine's loop over `models` (the connected models, tools
 * bound when the root node bound some). */
export interface ChatCall {
	generate(
		models: ChatModel[],
		messages: BaseMessage[],
		options: Record<string, unknown>,
	): Promise<ChatResult>;
	/** The same call streamed: the serving model's chunks as they arrive. */
	stream(
		models: ChatModel[],
		messages: BaseMessage[],
		options: Record<string, unknown>,
	): AsyncGenerator<AIMessageChunk>;
}

/** Settings of model 1 the root node reads to choose its output parser and built-in tools. */
export interface Presented {
	modelKwargs?: unknown;
	format?: unknown;
	metadata?: Record<string, unknown>;
	invocationKwargs?: unknown;
}

type WrapperClass = new (call: ChatCall, models: ChatModel[], presented: Presented) => ChatModel;
let loaded: WrapperClass | undefined;

export function resilientChatModel(
	call: ChatCall,
	models: ChatModel[],
	presented: Presented,
): ChatModel {
	loaded ??= defineClass();
	return new loaded(call, models, presented);
}

function defineClass(): WrapperClass {
	// eslint-disable-next-line @typescript-eslint/no-require-imports
	const core = require('@langchain/core/language_models/chat_models') as {
		BaseChatModel: abstract new (fields: object) => BaseChatModel;
	};
	// eslint-disable-next-line @typescript-eslint/no-require-imports
	const outputs = require('@langchain/core/outputs') as {
		ChatGenerationChunk: new (fields: {
			text: string;
			message: AIMessageChunk;
		}) => ChatGenerationChunk;
	};
	abstract class Base extends core.BaseChatModel {}
	class ResilientChatModel extends (Base as unknown as new (fields: object) => BaseChatModel & {
		modelKwargs?: unknown;
		format?: unknown;
	}) {
		constructor(
			private readonly chain: ChatCall,
			private readonly models: ChatModel[],
			private readonly presented: Presented,
		) {
			super({});
			if (presented.modelKwargs !== undefined) this.modelKwargs = presented.modelKwargs;
			if (presented.format !== undefined) this.format = presented.format;
			this.metadata = { ...(presented.metadata ?? {}) };
			if (presented.invocationKwargs !== undefined)
				this.lc_kwargs = { ...this.lc_kwargs, invocationKwargs: presented.invocationKwargs };
		}

		_llmType(): string {
			return 'resilient-chat-model';
		}

		/** Binds the tools to every connected model: a fallback mid-conversation continues it. */
		bindTools(tools: unknown[], kwargs?: Record<string, unknown>) {
			const bound = this.models.map((m) => {
				if (typeof m.bindTools !== 'function')
					throw new Error(`${m._llmType()} cannot call tools (it has no bindTools)`);
				return m.bindTools(tools as never, kwargs as never) as unknown as ChatModel;
			});
			return new ResilientChatModel(this.chain, bound, this.presented) as never;
		}

		async _generate(messages: BaseMessage[], options: this['ParsedCallOptions']) {
			return this.chain.generate(this.models, messages, options as Record<string, unknown>);
		}

		/** The root node streams (an AI Agent under a streaming trigger): the connected models
		 * are asked to stream, and the serving model's chunks are passed on as they arrive, each
		 * announced once as a new token (what LangChain's stream events are made of). Core 1.2+
		 * also has `_streamChatModelEvents`, taken only for a handler that prefers chat-model
		 * stream events (none of n8n's 2.41.1 or 1.123.81 nodes has one); its default is built
		 * on this method, so that path streams the same chunks. */
		async *_streamResponseChunks(
			messages: BaseMessage[],
			options: this['ParsedCallOptions'],
			runManager?: CallbackManagerForLLMRun,
		): AsyncGenerator<ChatGenerationChunk> {
			const stream = this.chain.stream(this.models, messages, options as Record<string, unknown>);
			for await (const message of stream) {
				const chunk = new outputs.ChatGenerationChunk({ text: message.text ?? '', message });
				await runManager?.handleLLMNewToken(
					chunk.text,
					undefined,
					undefined,
					undefined,
					undefined,
					{
						chunk,
					},
				);
				yield chunk;
			}
		}
	}
	return ResilientChatModel as unknown as WrapperClass;
}

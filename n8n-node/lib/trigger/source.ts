// Where a Resilient Provider Trigger reads the transition events a store wrote with its rows.
// Each source claims what it delivers for one consumer (the trigger's workflow): two n8n
// instances with the same workflow active deliver each event once in total.

/** Receives one event text as the engine wrote it; resolves once it is handed to n8n. */
export type OnEvent = (event: string) => Promise<void> | void;

export interface EventSource {
	/** Start delivering; events written while no trigger of this consumer listened come first,
	 * unless `fromNow` (a manual test run: only what happens while it listens). */
	start(on: OnEvent, onError: (e: Error) => void, fromNow?: boolean): Promise<void>;
	close(): Promise<void>;
}

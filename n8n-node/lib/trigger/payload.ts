// One trigger item from an event text as the engine wrote it (src/event.rs): the event's fields,
// with the scope the trigger watches. Transitions the trigger was not asked for give none.
import type { IDataObject } from 'n8n-workflow';

export function triggerPayload(
	event: string,
	scope: string,
	wanted: string[],
): IDataObject | undefined {
	const e = JSON.parse(event) as IDataObject;
	if (!wanted.includes(String(e.to))) return undefined;
	return { provider: e.provider, scope, ...e };
}

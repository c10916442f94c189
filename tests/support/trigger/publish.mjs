// A workflow switched off and on through n8n 2's REST API, as the editor's Unpublish and Publish
// buttons do (n8n 2.41.1, workflows.controller): POST /rest/workflows/<id>/deactivate, and
// POST /rest/workflows/<id>/activate with the workflow's versionId. n8n applies either through its
// publication outbox, so each then polls GET /rest/workflows/<id>/publication-status until the
// triggers say so (published: every trigger activated; off: none left).

import { ownerSession as signIn } from '../owner-session.mjs';

const pause = (ms) => new Promise((r) => setTimeout(r, ms));

/** The owner of the n8n on `port`, set up and logged in: its `rest` caller. */
export async function ownerSession(port) {
	return (await signIn(`http://127.0.0.1:${port}`)).rest;
}

async function settle(rest, id, what, ok, ms = 30_000) {
	let status;
	for (const end = Date.now() + ms; Date.now() < end; await pause(200)) {
		status = await rest('GET', `/workflows/${id}/publication-status`);
		if (ok(status)) return status;
	}
	throw new Error(`workflow ${id} not ${what} in ${ms} ms: ${JSON.stringify(status)}`);
}

/** Unpublish: n8n closes the workflow's triggers (their closeFunction). */
export async function deactivate(rest, id) {
	await rest('POST', `/workflows/${id}/deactivate`, {});
	return settle(rest, id, 'off', (s) => s.status === 'not_published' && s.triggers.length === 0);
}

/** Publish the workflow's current version: n8n starts its triggers again. */
export async function activate(rest, id) {
	const { versionId } = await rest('GET', `/workflows/${id}`);
	await rest('POST', `/workflows/${id}/activate`, { versionId });
	return settle(
		rest,
		id,
		'published',
		(s) =>
			s.status === 'published' &&
			s.triggers.length > 0 &&
			s.triggers.every((t) => t.status === 'activated'),
	);
}

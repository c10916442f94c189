// A workflow switched off and on through n8n 2's REST API, as the editor's Unpublish and Publish
// buttons do (n8n 2.41.1, workflows.controller): POST /rest/workflows/<id>/deactivate, and
// POST /rest/workflows/<id>/activate with the workflow's versionId. n8n applies either through its
// publication outbox, so each then polls GET /rest/workflows/<id>/publication-status until the
// triggers say so (published: every trigger activated; off: none left).

const pause = (ms) => new Promise((r) => setTimeout(r, ms));

/** The owner of the n8n on `port`, set up and logged in (no human at the setup screen). */
export async function ownerSession(port) {
	const base = `http://127.0.0.1:${port}/rest`;
	let cookie = '';
	const rest = async (method, route, body) => {
		const r = await fetch(`${base}${route}`, {
			method,
			headers: { 'content-type': 'application/json', cookie },
			body: body === undefined ? undefined : JSON.stringify(body),
		});
		const setCookie = r.headers.get('set-cookie');
		if (setCookie) cookie = setCookie.split(';')[0];
		const text = await r.text();
		if (!r.ok) throw new Error(`${method} /rest${route}: ${r.status} ${text.slice(0, 500)}`);
		return text ? JSON.parse(text).data : null;
	};
	const owner = {
		email: 'owner@example.com',
		firstName: 'T',
		lastName: 'O',
		password: 'Trig-owner-1',
	};
	await rest('POST', '/owner/setup', owner);
	await rest('POST', '/login', { emailOrLdapLoginId: owner.email, password: owner.password });
	return rest;
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

/** Notifications for the notify suites: a drift with attributions, as a drift run would hand it over. */
import type { Notification } from '../../engine/notify/index.ts';

export const COMMIT = '9c5c46d69ae1f0c2b7d4e8a1c3b5d7e9f1a2b3c4';

export const DRIFT: Notification = {
  event: 'drift',
  tenant: 'acme',
  time: '2027-03-01T09:20:00.000Z',
  commit: COMMIT,
  commitUrl: `https://github.com/example/contracts/commit/${COMMIT}`,
  run: { provider: 'github', url: 'https://github.com/example/contracts/actions/runs/42' },
  contracts: [
    {
      id: '4711',
      file: 'contracts/acme/facilities.yaml',
      line: 4,
      fields: [
        { field: 'Name', attribution: { field: 'Name', attributed: true, actor: 'jane@example.com', time: '2027-03-01T09:15:00.000Z', eventId: 'evt-000002' } },
        { field: 'Comment', attribution: { field: 'Comment', attributed: false, reason: 'no-event' } },
      ],
    },
  ],
};

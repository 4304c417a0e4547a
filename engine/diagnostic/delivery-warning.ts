/**
 * A notification a run could not deliver (engine/notify): a warning in the run's outcome and in its
 * report, never a failed run. It names the channel, the event and the tenant, and the host and the
 * answer; never the channel's URL (a Slack or Teams URL is a credential).
 */
export type DeliveryWarning =
  | { readonly code: 'notify-delivery'; readonly channel: string; readonly event: string; readonly tenant: string; readonly message: string }
  /** The drift notifications' memory could not be read or written: the next run may tell a drift again. */
  | { readonly code: 'notify-memory'; readonly tenant: string; readonly message: string };

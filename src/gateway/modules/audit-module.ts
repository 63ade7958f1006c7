/**
 * The audit log's purge of entries past their retention. The log itself is the core's: every surface records into
 * it, so it closes after every module (gateway-core.ts); `AuditService` is served by the client API.
 */
import { createAuditPurge } from '../audit/audit-purge.js';
import { createAuditStore } from '../audit/audit-store.js';
import type { GatewayModule } from './module.js';

/** The audit module (module-list.ts). */
export const auditModule: GatewayModule = {
  name: 'audit',
  serves: 'the periodic purge of audit entries past `audit.retentionDays`',
  build: (core) => {
    const { config } = core;
    const purge = createAuditPurge({
      store: createAuditStore(core.database),
      retentionDays: config.audit.retentionDays,
      batchSize: config.audit.purgeBatchSize,
      intervalMs: config.audit.purgeIntervalSeconds * 1000,
      logger: core.logger.child({ component: 'audit' }),
    });
    return {
      start: () => {
        purge.start();
        core.closers.defer('audit purge', () => purge.stop());
      },
    };
  },
};

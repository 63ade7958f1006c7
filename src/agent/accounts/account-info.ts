/** The protocol's description of a prepared account, as the Hello, AccountsChanged and AccountReports carry it. */
import { create } from '@bufbuild/protobuf';
import { AccountInfoSchema, KindInfoSchema, SkippedKindSchema, type AccountInfo } from '../../gen/outpost/agent/v1/agent_pb.js';
import type { PreparedAccount } from './prepare-account.js';

/** Describes an account for the Hello (and for AccountReports). */
export function accountInfo(prepared: PreparedAccount): AccountInfo {
  return create(AccountInfoSchema, {
    name: prepared.config.name,
    apiHost: prepared.apiHost,
    caFingerprint: prepared.caFingerprint,
    kubernetesVersion: prepared.kubernetesVersion,
    namespaces: prepared.config.namespaces,
    kinds: prepared.kinds.map((k) =>
      create(KindInfoSchema, { apiVersion: k.apiVersion, kind: k.kind, resource: k.resource, namespaced: k.namespaced }),
    ),
    skippedKinds: prepared.skipped.map((s) => create(SkippedKindSchema, s)),
    properties: prepared.config.properties,
    error: prepared.error,
  });
}

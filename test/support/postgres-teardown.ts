import { dropSchemas } from './postgres-setup';

/** Jest global teardown: drops the schemas of this run (named by the global setup's TEST_RUN_ID). */
export default async function endRun(): Promise<void> {
  const prefix = `bridge_test_${process.env.TEST_RUN_ID}_`;
  await dropSchemas((name) => name.startsWith(prefix));
}

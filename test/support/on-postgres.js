// The e2e-postgres project (jest.config.js): its spec files run on PostgreSQL. Jest gives each spec file a
// process.env of its own, so the e2e project beside it in the same run stays on SQLite.
process.env.TEST_DATABASE = 'postgres';

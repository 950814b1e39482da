import { Migration20261121000000_initial } from './Migration20261121000000_initial.ts';

/** Every migration in order, listed explicitly so PGlite and PostgreSQL run the very same set. */
export const migrationsList = [
  { name: 'Migration20261121000000_initial', class: Migration20261121000000_initial },
];

import { ConfigModule } from '@nestjs/config';
import { AppConfig, Environment, loadConfig } from './app-config';

/**
 * The operator's configuration for a real run (main.ts): the process environment over `.env` in the
 * working directory (a variable set in the environment wins; the file is optional, for local runs), read
 * by @nestjs/config's loader and validated by `loadConfig` as ConfigModule's `validate`. That hook hands
 * ConfigModule an empty object back, because ConfigModule copies whatever it returns into process.env:
 * the validated configuration reaches the application only as the frozen object returned here.
 */
export async function loadEnvironment(envFilePath = '.env'): Promise<AppConfig> {
  let config: AppConfig | undefined;
  await ConfigModule.forRoot({
    envFilePath,
    validate: (env: Environment) => {
      config = loadConfig(env);
      return {};
    },
  });
  if (!config) throw new Error('the configuration was not read');
  return config;
}

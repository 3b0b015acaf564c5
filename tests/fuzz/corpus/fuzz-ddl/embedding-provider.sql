CREATE EMBEDDING PROVIDER shop.endpoint USING openai WITH (base_url = 'http://127.0.0.1:8080', model = 'text-embedding-3', dimensions = 8, api_key_env = 'OPENAI_API_KEY', max_batch_inputs = 16, tokens_per_minute = 60000);
DROP EMBEDDING PROVIDER IF EXISTS shop.endpoint;
SELECT * FROM system.embedding_providers;
SELECT * FROM system.embedding_cache;

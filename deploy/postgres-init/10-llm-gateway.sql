-- The LLM gateway keeps its model registrations (the provider keys encrypted under
-- GATEWAY_SALT_KEY) in a database of its own, next to Lectern's. Runs once, when
-- the postgres volume is first initialised.
CREATE DATABASE llm_gateway;

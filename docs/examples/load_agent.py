import gdi

agent = gdi.load_agent("runs/<run>", checkpoint="latest", policy="population")  # or "greedy"
env = gdi.envs.make_vector_env(agent.env_config, num_envs=8, seed=0)
obs, _ = env.reset()
agent.reset(env)  # checks the env's spaces against the run's; agent.reset(8) works too
for _ in range(500):
    actions = agent.act(obs)  # π_λ per environment, LSTM state carried
    obs, rewards, terminated, truncated, _ = env.step(actions)
    agent.observe(rewards, terminated, truncated)  # episode ends: fresh λ, zero LSTM state

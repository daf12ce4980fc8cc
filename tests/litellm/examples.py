#!/usr/bin/env python3
"""The Python examples of docs/integrations.md (OpenAI Agents SDK, LangChain middleware, guard's
own stream), run as written against the real guard and the mock model: only guard's address is
replaced, and the agents get the mock as their model and tools the mock calls.

usage: examples.py docs/integrations.md   with GUARD_URL, MOCK_URL and GUARD_KEY (guard's API
key, when it has keys) in the environment
(run.sh runs it as the phase "examples", with openai-agents, langchain, langchain-openai and
aiohttp in a virtual environment of their own). The last line is "N passed, N failed".
"""
import asyncio
import os
import re
import sys

DOC = sys.argv[1]
GUARD = os.environ["GUARD_URL"]
MOCK = os.environ["MOCK_URL"]
blocks = re.findall(r"```python\n(.*?)```", open(DOC, encoding="utf-8").read(), re.S)
results = []


def fix(block):
    key = os.environ.get("GUARD_KEY", "<guard key>")
    return block.replace("http://guard.internal:8080", GUARD).replace("<guard key>", key)


def check(name, ok, why=""):
    results.append(ok)
    print(("PASS " if ok else "FAIL ") + name + ("" if ok else f": {why}"))

ran = []


def ids(turn):
    # The run's context as the platform sets it from its session: the conversation, the turn
    # and the signed-in caller (who owns the wallet the examples' calls name).
    caller = {"id": "cust-1", "records": {"wallet": ["01711000000"]}}
    return {"conversation": "conv-examples", "turn": turn, "caller": caller}


# ---- OpenAI Agents SDK ----
async def agents_sdk():
    ns = {}
    exec(fix(blocks[0]), ns)
    from agents import Agent, Runner, function_tool, set_tracing_disabled, OpenAIChatCompletionsModel
    from agents.exceptions import InputGuardrailTripwireTriggered
    from openai import AsyncOpenAI
    set_tracing_disabled(True)
    model = OpenAIChatCompletionsModel(model="mock-bank", openai_client=AsyncOpenAI(base_url=MOCK, api_key="x"))

    @function_tool(tool_input_guardrails=[ns["gate"]])
    def transfer_money(to_account: str, amount: int, currency: str) -> str:
        ran.append("transfer_money"); return "sent"

    @function_tool(tool_input_guardrails=[ns["gate"]])
    def get_balance(wallet: str) -> str:
        ran.append("get_balance"); return "1,250 BDT"

    agent = Agent(name="wallet", model=model, tools=[transfer_money, get_balance],
                  input_guardrails=[ns["screen_question"]], output_guardrails=[ns["screen_answer"]])
    try:
        await Runner.run(agent, "amar card block kore den", context=ids("a1"))
        check("agents: Banglish trips the input guardrail", False, "no tripwire")
    except InputGuardrailTripwireTriggered as e:
        info = e.guardrail_result.output.output_info
        check("agents: Banglish trips the input guardrail", info["reason"] == "unsupported_language", info)
    r = await Runner.run(agent, "What is my balance?", context=ids("a2"))
    check("agents: an allowed tool call runs", ran == ["get_balance"] and "done" in str(r.final_output), (ran, r.final_output))
    r = await Runner.run(agent, "Please transfer 500 BDT to account 999-000-111", context=ids("a3"))
    check("agents: the gate rejects transfer_money; it never runs", "transfer_money" not in ran, ran)
    r = await Runner.run(agent, "Which card do I have on file?", context=ids("a4"))
    check("agents: an answer with a card passes the output guardrail (masking is not a block)", "4111" in str(r.final_output), r.final_output)

# ---- LangChain ----
def langchain_mw():
    src = fix(blocks[1]).rsplit("agent = create_agent", 1)[0]
    ns = {}
    exec(src, ns)
    from langchain.agents import create_agent
    from langchain_openai import ChatOpenAI
    from langchain.tools import tool
    ran.clear()

    @tool
    def transfer_money(to_account: str, amount: int, currency: str) -> str:
        """Move money."""
        ran.append("transfer_money"); return "sent"

    @tool
    def get_balance(wallet: str) -> str:
        """The balance."""
        ran.append("get_balance"); return "1,250 BDT"

    model = ChatOpenAI(model="mock-bank", base_url=MOCK, api_key="x")
    agent = create_agent(model, tools=[transfer_money, get_balance],
                         middleware=[ns["screen_question"], ns["mask_answer"], ns["gate"]], context_schema=dict)
    out = agent.invoke({"messages": [{"role": "user", "content": "amar card block kore den"}]}, context=ids("l0"))
    last = out["messages"][-1].text
    check("langchain: Banglish answered with guard's reply", last.startswith("Sorry, I can only answer"), last)
    out = agent.invoke({"messages": [{"role": "user", "content": "Which card do I have on file?"}]}, context=ids("l1"))
    last = out["messages"][-1].text
    check("langchain: the answer is masked in place", "4111 1111 1111 1111" not in last and "1111" in last, last)
    out = agent.invoke({"messages": [{"role": "user", "content": "Please transfer 500 BDT to account 999-000-111"}]}, context=ids("l2"))
    tool_msgs = [m for m in out["messages"] if m.type == "tool"]
    check("langchain: the gate refuses transfer_money; it never runs",
          "transfer_money" not in ran and tool_msgs and "not available" in tool_msgs[0].text, (ran, [m.text for m in tool_msgs]))
    out = agent.invoke({"messages": [{"role": "user", "content": "What is my balance?"}]}, context=ids("l3"))
    check("langchain: an allowed call runs", ran == ["get_balance"], ran)

# ---- guard's own stream ----
async def stream():
    ns = {}
    exec(fix(blocks[2]), ns)
    async def deltas():
        for piece in ["Your card ", "4111 1111 ", "1111 1111", " is active."]:
            yield piece
    out = [d async for d in ns["masked"](deltas())]
    text = "".join(out)
    check("stream: masked as it streams", text == "Your card **** **** **** 1111 is active." and len(out) > 1, out)

asyncio.run(agents_sdk())
langchain_mw()
asyncio.run(stream())
print(f"{sum(results)} passed, {len(results) - sum(results)} failed")
sys.exit(0 if all(results) else 1)

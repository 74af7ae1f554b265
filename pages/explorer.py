import streamlit as st

from pages import common

st.header("Explorer")
bert, err = common.get_bert(common.current_model())
if err:
    st.error(err)
    st.stop()
c = bert.config
st.write(f"{bert.name}: {c.num_hidden_layers} layers × {c.num_attention_heads} heads, "
         f"hidden size {c.hidden_size}.")

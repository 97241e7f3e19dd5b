datafile = 'future-gpu.dat'
set terminal svg size 1000,700 dynamic background rgb 'white' font 'Sans,11'
set output 'future-gpu.svg'
set title 'future-gpu: an H100 successor with 3x the compute and 1.5x the HBM on the same network (2,048 GPUs)' noenhanced font ',10'
set grid
set key noenhanced below vertical font ',9'
set xlabel 'gpu.bf16_dense+gpu.fp16_dense+gpu.fp8_dense+gpu.tf32_dense+gpu.fp32' noenhanced
set xtics ('x1' 0, 'x3' 1)
set offsets 0.2, 0.2, 0, 0
set ylabel 'tokens/s over the run''s first point'
plot datafile index 0 using 1:2 with linespoints lw 2 pt 7 lc 1 title 'llama2-7b, batch 1024x4k, gpu.hbm_bandwidth+gpu.hbm_capacity=x1', \
     datafile index 1 using 1:2 with linespoints lw 2 pt 7 lc 2 title 'llama2-7b, batch 1024x4k, gpu.hbm_bandwidth+gpu.hbm_capacity=x1.5', \
     datafile index 2 using 1:2 with linespoints lw 2 pt 7 lc 3 title 'llama3-70b, batch 1024x8k, gpu.hbm_bandwidth+gpu.hbm_capacity=x1', \
     datafile index 3 using 1:2 with linespoints lw 2 pt 7 lc 4 title 'llama3-70b, batch 1024x8k, gpu.hbm_bandwidth+gpu.hbm_capacity=x1.5'
